// What every Crypto call checks before any work: that the keystore has loaded, who
// is calling (their tenant), the key name, the associated data's size and the
// message's size.
#ifndef SEALBOX_SERVER_CRYPTO_ADMISSION_H_
#define SEALBOX_SERVER_CRYPTO_ADMISSION_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"
#include "server/auth/auth.h"
#include "server/keystore/keystore.h"

namespace sealbox::server {

// Who is calling and the snapshot their call works on.
struct Caller {
  std::shared_ptr<const Snapshot> snapshot;
  std::string tenant;
};

class Admission {
 public:
  Admission(Keystore* keystore, const Authenticator* authenticator)
      : keystore_(keystore), authenticator_(authenticator) {}

  // `size` is the plaintext or ciphertext the call carries, `limit` its unary bound
  // (a stream's start message passes 0 and 0). Errors: UNAVAILABLE before the
  // keystore has loaded, UNAUTHENTICATED / PERMISSION_DENIED from the authenticator,
  // INVALID_ARGUMENT for a bad key name or oversized associated data,
  // RESOURCE_EXHAUSTED for an oversized message.
  absl::StatusOr<Caller> Admit(const grpc::CallbackServerContext& context,
                               const std::string& key, const std::string& aad,
                               size_t size, size_t limit) const;

 private:
  Keystore* keystore_;
  const Authenticator* authenticator_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_CRYPTO_ADMISSION_H_
