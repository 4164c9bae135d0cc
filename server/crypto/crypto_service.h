// sealbox.v1.Crypto over gRPC's callback API: authentication, limits and the
// conversion to grpc::Status; the work itself is CryptoEngine's.
#ifndef SEALBOX_SERVER_CRYPTO_CRYPTO_SERVICE_H_
#define SEALBOX_SERVER_CRYPTO_CRYPTO_SERVICE_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/time/time.h"

#include "crypto/format/unary.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/auth/auth.h"
#include "server/crypto/crypto_engine.h"
#include "server/crypto/crypto_limits.h"
#include "server/keystore/keystore.h"
#include "server/metrics/metrics.h"
#include "server/crypto/stream_watchdog.h"

namespace sealbox::server {

class CryptoService final : public v1::Crypto::CallbackService {
 public:
  CryptoService(Keystore* keystore, const Authenticator* authenticator,
                CryptoLimits limits, Metrics* metrics);

  grpc::ServerUnaryReactor* Seal(grpc::CallbackServerContext* context,
                                 const v1::SealRequest* request,
                                 v1::SealResponse* response) override;
  grpc::ServerUnaryReactor* Open(grpc::CallbackServerContext* context,
                                 const v1::OpenRequest* request,
                                 v1::OpenResponse* response) override;
  grpc::ServerUnaryReactor* Rewrap(grpc::CallbackServerContext* context,
                                   const v1::RewrapRequest* request,
                                   v1::RewrapResponse* response) override;
  grpc::ServerBidiReactor<v1::SealStreamRequest, v1::SealStreamResponse>* SealStream(
      grpc::CallbackServerContext* context) override;
  grpc::ServerBidiReactor<v1::OpenStreamRequest, v1::OpenStreamResponse>* OpenStream(
      grpc::CallbackServerContext* context) override;

 private:
  template <typename Request, typename Response>
  friend class StreamCall;
  friend class SealStreamCall;
  friend class OpenStreamCall;

  // Who is calling and the snapshot their call works on.
  struct Caller {
    std::shared_ptr<const Snapshot> snapshot;
    std::string tenant;
  };

  // Authenticates the caller and checks the key name, the associated data's size and
  // the message size.
  absl::StatusOr<Caller> Admit(const grpc::CallbackServerContext& context,
                               const std::string& key, const std::string& aad,
                               size_t size, size_t limit) const;

  // Counts what an Open or Rewrap of the caller's `key` ended with.
  void CountOpenOutcome(const absl::Status& status, const std::string& tenant,
                        const std::string& key);

  size_t MaxUnaryCiphertextBytes() const {
    return limits_.max_unary_bytes + crypto::kUnaryOverheadBytes;
  }

  Keystore* keystore_;
  const Authenticator* authenticator_;
  const CryptoLimits limits_;
  Metrics* metrics_;
  CryptoEngine engine_;
  std::atomic<int> active_streams_{0};
  StreamWatchdog watchdog_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_CRYPTO_CRYPTO_SERVICE_H_
