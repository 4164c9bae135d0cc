// The unary clients the load generator measures, one factory per method. Each
// returns a UnaryCall (unary_load.h) that holds its own stub and a request built
// once, so that a timed call does nothing but the call; every call carries the
// tenant's bearer token, Echo's too, so that the bytes on the wire are alike.
#ifndef SEALBOX_SERVER_BENCH_UNARY_CLIENTS_H_
#define SEALBOX_SERVER_BENCH_UNARY_CLIENTS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "server/bench/unary_load.h"

namespace sealbox::load {

// Echo of `data`: the baseline. Echo ignores the token, so checking it is left as
// the data plane's own cost.
UnaryCall NewEchoClient(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                        const std::string& data);

// Seal of `plaintext` with kKey.
UnaryCall NewSealClient(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                        const std::string& plaintext);

// Open of `ciphertext` with kKey.
UnaryCall NewOpenClient(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                        const std::string& ciphertext);

// SealBatch of `items` items of `plaintext`; a call fails unless every item was
// sealed.
UnaryCall NewSealBatchClient(const std::shared_ptr<grpc::Channel>& channel,
                             const std::string& token, const std::string& plaintext, int items);

// One untimed Seal, for a ciphertext that Open clients can use.
absl::StatusOr<std::string> SealOnce(const std::shared_ptr<grpc::Channel>& channel,
                                     const std::string& token, const std::string& plaintext);

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_UNARY_CLIENTS_H_
