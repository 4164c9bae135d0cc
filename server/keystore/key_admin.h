// Keys and their versions: created, imported, rotated (by hand and on a schedule),
// read, and taken out of use (disabled, a minimum decryption version, destroyed,
// trimmed). Material is made here from the OS's random source and never leaves the
// keystore but into the snapshot.
#ifndef SEALBOX_SERVER_KEYSTORE_KEY_ADMIN_H_
#define SEALBOX_SERVER_KEYSTORE_KEY_ADMIN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/keystore/info.h"
#include "server/keystore/keystore_transaction.h"

namespace sealbox::server {

// Errors as for every admin call (keystore.h); FAILED_PRECONDITION for what would
// leave a key unusable (destroying or disabling its primary version).
class KeyAdmin {
 public:
  explicit KeyAdmin(KeystoreWriter& keystore) : keystore_(keystore) {}
  KeyAdmin(const KeyAdmin&) = delete;
  KeyAdmin& operator=(const KeyAdmin&) = delete;

  // `algorithm` kUnspecified means kAes256Gcm. An `exportable` key's versions may
  // leave wrapped (key_transfer.h); the choice cannot be undone.
  absl::StatusOr<KeyInfo> CreateKey(const std::string& tenant, const std::string& key,
                                    KeyAlgorithm algorithm, bool exportable = false);

  struct ImportOptions {
    // For a new key: whether its versions may leave wrapped.
    bool exportable = false;
    // Nonzero: the version number the material must become (an export's own, so
    // that what was sealed under it elsewhere opens here); FAILED_PRECONDITION when
    // the key's next version is another.
    uint32_t version = 0;
  };
  // A new key (its algorithm from the material's size), or a new primary version of
  // an existing key (the size must match its algorithm). Material that is one byte
  // repeated (all zeros, ...) is INVALID_ARGUMENT.
  absl::StatusOr<KeyInfo> ImportKey(const std::string& tenant, const std::string& key,
                                    absl::Span<const uint8_t> material,
                                    const ImportOptions& options);
  absl::StatusOr<KeyInfo> ImportKey(const std::string& tenant, const std::string& key,
                                    absl::Span<const uint8_t> material) {
    return ImportKey(tenant, key, material, ImportOptions());
  }
  absl::StatusOr<KeyInfo> GetKey(const std::string& tenant, const std::string& key) const;
  absl::StatusOr<std::vector<KeyInfo>> ListKeys(const std::string& tenant) const;

  absl::StatusOr<KeyInfo> RotateKey(const std::string& tenant, const std::string& key);
  // Zero: no automatic rotation. INVALID_ARGUMENT below the keystore's
  // min_rotation_period, or negative.
  absl::StatusOr<KeyInfo> SetRotationPeriod(const std::string& tenant, const std::string& key,
                                            absl::Duration period);
  // Rotates every key whose rotation is due at `now`. Each rotation is a transaction
  // that checks again that it is still due, so replicas doing this at once rotate a
  // key once: the others' commits conflict, and their retries find it done. Returns
  // the keys this call rotated ("tenant/key").
  std::vector<std::string> RotateDueKeys(absl::Time now);
  // How often a server should call RotateDueKeys: a tenth of the shortest period
  // allowed, between 100 ms and a minute.
  absl::Duration RotationCheckInterval() const;

  // 1 <= version <= the primary version.
  absl::StatusOr<KeyInfo> SetMinDecryptionVersion(const std::string& tenant, const std::string& key,
                                                  uint32_t version);
  // The whole key in or out of use (DisableKey): while disabled, no version seals
  // or opens and RotateDueKeys passes it by. Setting what is already set is OK
  // and writes nothing.
  absl::StatusOr<KeyInfo> SetKeyEnabled(const std::string& tenant, const std::string& key,
                                        bool enabled);
  // kEnabled or kDisabled.
  absl::StatusOr<KeyInfo> SetVersionState(const std::string& tenant, const std::string& key,
                                          uint32_t version, VersionState state);
  // Wipes the material; the version stays, kDestroyed. Destroying a destroyed
  // version again is OK and changes nothing (it returns the key).
  absl::StatusOr<KeyInfo> DestroyVersion(const std::string& tenant, const std::string& key,
                                         uint32_t version);
  // Deletes every version below `min_available_version`, material and all, so a
  // key's history stays bounded. Only versions that no longer open may go: it must
  // be at most the minimum decryption version. Irreversible; asking for no more
  // than is already trimmed changes nothing.
  absl::StatusOr<KeyInfo> TrimKey(const std::string& tenant, const std::string& key,
                                  uint32_t min_available_version);

 private:
  // Updates one key: `change` gets it (NOT_FOUND when it or its tenant is missing)
  // and returns whether it changed it; a key left as it was is not written again.
  absl::StatusOr<KeyInfo> UpdateKey(
      const std::string& tenant, const std::string& key,
      const std::function<absl::StatusOr<bool>(internal::Key&)>& change);

  KeystoreWriter& keystore_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_KEY_ADMIN_H_
