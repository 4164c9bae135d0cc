// Keys in and out of the keystore only wrapped, as AWS KMS, Cloud KMS import jobs and
// Vault Transit's BYOK take and give them (server/custody/key_wrap.h draws the wrap):
//
//   import keys   a tenant's RSA-4096 key pairs, each with an expiry, kept in the
//                 tenant's own record (so under the KEK; the private half never leaves)
//   import        key material wrapped for one of them, as a new key or a new version
//   export        every version of a key created exportable, wrapped for another
//                 server's import key; a key not created exportable never leaves
#ifndef SEALBOX_SERVER_KEYSTORE_KEY_TRANSFER_H_
#define SEALBOX_SERVER_KEYSTORE_KEY_TRANSFER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/keystore/info.h"
#include "server/keystore/key_admin.h"
#include "server/keystore/keystore_transaction.h"

namespace sealbox::server {

// What a sender needs to wrap key material for a tenant. Not secret.
struct ImportParameters {
  std::string import_key_id;   // names the pair in ImportWrappedKey
  std::string public_key_der;  // SubjectPublicKeyInfo, RSA-4096
  std::string public_key_pem;  // the same, "-----BEGIN PUBLIC KEY-----"
  absl::Time create_time;
  absl::Time expire_time;
};

// One version of an exported key, wrapped for the receiver's import key.
struct ExportedVersion {
  uint32_t version = 0;
  std::string wrapped;
};

struct ExportedKey {
  KeyInfo key;
  std::vector<ExportedVersion> versions;  // ascending; destroyed ones have no material
};

class KeyTransfer {
 public:
  // Import keys live this long unless asked otherwise, and at most this long.
  static constexpr absl::Duration kDefaultImportKeyTtl = absl::Hours(24);
  static constexpr absl::Duration kMaxImportKeyTtl = absl::Hours(24 * 7);

  KeyTransfer(KeystoreWriter& keystore, KeyAdmin& keys) : keystore_(keystore), keys_(keys) {}
  KeyTransfer(const KeyTransfer&) = delete;
  KeyTransfer& operator=(const KeyTransfer&) = delete;

  // The tenant's newest import key while it has more than half of `ttl` to live (and
  // no more than `ttl`), else a new RSA-4096 pair that lives `ttl` (zero: kDefaultImportKeyTtl; at
  // most kMaxImportKeyTtl). Expired pairs are dropped; a tenant keeps four at most.
  absl::StatusOr<ImportParameters> GetImportParameters(const std::string& tenant,
                                                       absl::Duration ttl);

  // Key material wrapped for one of `tenant`'s import keys, imported as
  // KeyAdmin::ImportKey does. NOT_FOUND for an import key the tenant does not have;
  // FAILED_PRECONDITION for an expired one; INVALID_ARGUMENT for material that does not
  // unwrap (altered, or wrapped for another key). Nothing changes on any error.
  absl::StatusOr<KeyInfo> ImportWrappedKey(const std::string& tenant, const std::string& key,
                                           const std::string& import_key_id,
                                           absl::string_view wrapped,
                                           const KeyAdmin::ImportOptions& options);

  // Every version of `key` that has material, each wrapped for `public_key` (an
  // import key's SubjectPublicKeyInfo, PEM or DER). FAILED_PRECONDITION for a key not
  // created exportable; INVALID_ARGUMENT for a public key that is not RSA-2048 or more.
  absl::StatusOr<ExportedKey> ExportKey(const std::string& tenant, const std::string& key,
                                        absl::string_view public_key);

 private:
  KeystoreWriter& keystore_;
  KeyAdmin& keys_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_KEY_TRANSFER_H_
