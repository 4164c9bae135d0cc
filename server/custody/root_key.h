// The root of trust: a key the server can use but never holds, which seals the
// keystore's KEK (sealed_kek.h). An HSM key over PKCS#11 is one (pkcs11_root_key.h).
// The KEK it unseals lives only in the server's locked memory; what the root key
// seals may sit anywhere (a file beside the keystore, etcd) because without the root
// key it is useless.
#ifndef SEALBOX_SERVER_CUSTODY_ROOT_KEY_H_
#define SEALBOX_SERVER_CUSTODY_ROOT_KEY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/secret/secret_bytes.h"

namespace sealbox::server::custody {

class RootKey {
 public:
  virtual ~RootKey() = default;

  // Names the key for logs and messages, never anything secret:
  // "PKCS#11 key 'sealbox-root' on token 'prod'".
  virtual std::string Describe() const = 0;

  // Encrypts `secret` under the root key, bound to `context` (authenticated, not
  // stored): what Unwrap takes back. UNAVAILABLE when the root key cannot be used.
  virtual absl::StatusOr<std::string> Wrap(absl::Span<const uint8_t> secret,
                                           absl::string_view context) = 0;

  // Decrypts what Wrap returned, given the same context, into secret memory.
  // FAILED_PRECONDITION when it does not open (another root key sealed it, or it
  // was altered); UNAVAILABLE when the root key cannot be used.
  virtual absl::StatusOr<crypto::SecretBytes> Unwrap(absl::string_view wrapped,
                                                     absl::string_view context) = 0;

  // Whether the root key can be used now (one small operation with it), connecting
  // again first if the connection was lost. UNAVAILABLE, saying why, when not.
  virtual absl::Status Check() = 0;
};

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_ROOT_KEY_H_
