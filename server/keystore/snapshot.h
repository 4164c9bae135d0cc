// An immutable, in-memory view of the whole keystore, built from the decrypted file.
// The data plane reads it without a lock; the keystore swaps in a new one per change.
#ifndef SEALBOX_SERVER_KEYSTORE_SNAPSHOT_H_
#define SEALBOX_SERVER_KEYSTORE_SNAPSHOT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/format/secret_bytes.h"
#include "crypto/format/unary.h"
#include "sealbox/v1/admin.pb.h"
#include "server/keystore/keystore_file.h"
#include "server/keystore/sealing_epoch.h"

namespace sealbox::server {

// One version of a key, as the data plane needs it.
struct KeyVersionEntry {
  uint32_t version = 0;
  v1::KeyVersionState state = v1::KEY_VERSION_STATE_UNSPECIFIED;
  // Empty once destroyed.
  std::shared_ptr<const crypto::SecretBytes> material;
  bool imported = false;
  int64_t create_time_unix = 0;
};

// One key of one tenant, in a snapshot.
struct KeyEntry {
  std::string tenant;
  std::string name;
  v1::Algorithm algorithm = v1::ALGORITHM_UNSPECIFIED;
  uint32_t primary_version = 0;
  uint32_t min_decryption_version = 0;
  std::map<uint32_t, KeyVersionEntry> versions;
  // The primary version's sealing epoch, expanded on first use. A new snapshot
  // reuses the previous one's while the primary version and its material are the
  // same, so an admin change elsewhere does not restart every key's epoch.
  std::shared_ptr<SealingEpoch> sealing;

  // The version for opening, or: NOT_FOUND (no such version), FAILED_PRECONDITION
  // (disabled, destroyed, or below the minimum decryption version).
  absl::StatusOr<const KeyVersionEntry*> VersionForOpen(uint32_t version) const;

  // The public description (no key material).
  v1::Key ToProto() const;
};

struct TenantEntry {
  std::string name;
  std::vector<v1::TokenInfo> tokens;  // live tokens, never the secrets
  std::map<std::string, KeyEntry, std::less<>> keys;

  v1::Tenant ToProto() const;
};

// An immutable view of the whole keystore.
class Snapshot {
 public:
  // Builds the view of `contents`, reusing sealing subkeys from `previous` (may be
  // null) where the key's primary version and its material are unchanged.
  static absl::StatusOr<std::shared_ptr<const Snapshot>> Build(
      const KeystoreContents& contents, const Snapshot* previous);

  // The tenant whose token this is, or NOT_FOUND. Looked up by the token's SHA-256,
  // so the timing of the lookup depends only on that hash (see snapshot.cc).
  absl::StatusOr<std::string> TenantForToken(absl::string_view token) const;

  // The key `name` of `tenant`, or nullptr.
  const KeyEntry* FindKey(absl::string_view tenant, absl::string_view name) const;

  // The tenant `name`, or nullptr.
  const TenantEntry* FindTenant(absl::string_view name) const;

  // Every tenant, by name.
  const std::map<std::string, TenantEntry, std::less<>>& tenants() const {
    return tenants_;
  }

  // Monotonic, +1 per committed change; stored in the file.
  uint64_t generation() const { return generation_; }

 private:
  Snapshot() = default;

  uint64_t generation_ = 0;
  std::map<std::string, TenantEntry, std::less<>> tenants_;
  // SHA-256 of every live token -> its tenant.
  std::map<std::string, std::string, std::less<>> tenant_by_token_sha256_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_SNAPSHOT_H_
