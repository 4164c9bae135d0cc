// sealbox.bench.Echo: answers every message with itself. Served only by
// sealbox-bench-server, as the baseline `tools/dev bench service` measures Crypto
// against.
#ifndef SEALBOX_SERVER_BENCH_ECHO_SERVICE_H_
#define SEALBOX_SERVER_BENCH_ECHO_SERVICE_H_

#include "grpcpp/support/server_callback.h"
#include "sealbox/bench/echo.grpc.pb.h"

namespace sealbox::server::bench {

class EchoService final : public sealbox::bench::Echo::CallbackService {
 public:
  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* context,
                                 const sealbox::bench::EchoMessage* request,
                                 sealbox::bench::EchoMessage* response) override;

  grpc::ServerBidiReactor<sealbox::bench::EchoMessage, sealbox::bench::EchoMessage>* EchoStream(
      grpc::CallbackServerContext* context) override;

  grpc::ServerReadReactor<sealbox::bench::EchoMessage>* Discard(
      grpc::CallbackServerContext* context, sealbox::bench::DiscardSummary* summary) override;
};

}  // namespace sealbox::server::bench

#endif  // SEALBOX_SERVER_BENCH_ECHO_SERVICE_H_
