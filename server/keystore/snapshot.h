// An immutable, in-memory view of the whole keystore. The data plane reads it without
// a lock; the keystore swaps in a new one per change. A new snapshot shares every
// tenant and key that did not change with the one before it, so a change costs about
// the size of the tenant it touches, not of the keystore.
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
#include "crypto/format/epochs.h"
#include "crypto/format/unary.h"
#include "crypto/secret/secret_bytes.h"
#include "server/auth/token_access.h"
#include "server/keystore/info.h"
#include "server/keystore/keystore_file.h"
#include "server/keystore/storage.h"

namespace sealbox::server {

// One version of a key, as the data plane needs it.
struct KeyVersionEntry {
  uint32_t version = 0;
  VersionState state = VersionState::kEnabled;
  // Empty once destroyed.
  std::shared_ptr<const crypto::SecretBytes> material;
  bool imported = false;
  int64_t create_time_unix = 0;
};

// One key of one tenant, in a snapshot.
struct KeyEntry : KeySummary {
  std::map<uint32_t, KeyVersionEntry> versions;
  // The primary version's sealing epoch, expanded on first use: a handle the
  // keystore's crypto::Epochs gave out (and hands on to the next snapshot while the
  // primary version and its material are the same).
  std::shared_ptr<crypto::SealingEpoch> sealing;

  // The version for opening, or: NOT_FOUND (no such version), FAILED_PRECONDITION
  // (disabled, destroyed, or below the minimum decryption version).
  absl::StatusOr<const KeyVersionEntry*> VersionForOpen(uint32_t version) const;

  // `key` of `tenant` as stored, without its material or sealing epoch: enough to
  // describe it.
  static KeyEntry WithoutMaterial(const std::string& tenant, const internal::Key& key);

  // What admin calls say of the key (no key material).
  KeyInfo Info() const;
};

// What a live token grants, as each data-plane call checks it.
struct TokenGrant {
  std::string tenant;  // kAdminTokensTenant for an admin token
  std::string id;
  absl::Time expire_time = absl::InfiniteFuture();
  TokenAccess access;
  bool read_only = false;  // admin tokens: may only read
  bool retired = false;    // a retired bootstrap admin token: refused
};

struct TenantEntry {
  std::string name;
  std::vector<TokenInfo> tokens;  // live tokens, never the secrets
  std::map<std::string, std::string> token_sha256_by_id;
  std::map<std::string, std::shared_ptr<const KeyEntry>, std::less<>> keys;

  TenantInfo Info() const;
};

// An immutable view of the whole keystore.
class Snapshot {
 public:
  // An empty keystore at generation 0: what a keystore serves before it has loaded.
  static std::shared_ptr<const Snapshot> Empty();

  // Builds the view of `contents`, each key's sealing epoch from `epochs` (which
  // hands on `previous`'s where it still fits; `previous` may be null).
  static absl::StatusOr<std::shared_ptr<const Snapshot>> Build(const KeystoreContents& contents,
                                                               const Snapshot* previous,
                                                               crypto::Epochs& epochs);

  // This view with `changes` applied, at `generation`. A key or token whose tenant is
  // not there is left out (it can only come from an edit of the store by hand). On
  // error (a key without a usable primary version) nothing is applied.
  absl::StatusOr<std::shared_ptr<const Snapshot>> With(const std::vector<RecordChange>& changes,
                                                       uint64_t generation,
                                                       crypto::Epochs& epochs) const;

  // What this token grants (its tenant, id, expiry and scope), or NOT_FOUND. Looked
  // up by the token's SHA-256, so the timing of the lookup depends only on that hash
  // (see snapshot.cc). Whether it has expired is the caller's to check.
  absl::StatusOr<std::shared_ptr<const TokenGrant>> TokenFor(absl::string_view token) const;
  // TokenFor, by the token's SHA-256 (32 raw bytes).
  absl::StatusOr<std::shared_ptr<const TokenGrant>> TokenForSha256(absl::string_view sha256) const;
  // TokenFor's tenant.
  absl::StatusOr<std::string> TenantForToken(absl::string_view token) const;

  // The key `name` of `tenant`, or nullptr.
  const KeyEntry* FindKey(absl::string_view tenant, absl::string_view name) const;

  // The tenant `name`, or nullptr.
  const TenantEntry* FindTenant(absl::string_view name) const;

  using TenantMap = std::map<std::string, std::shared_ptr<const TenantEntry>, std::less<>>;
  // Every tenant, by name.
  const TenantMap& tenants() const { return tenants_; }

  // Grows with every committed change: the file's generation (+1 per change), or the
  // etcd revision the snapshot is at.
  uint64_t generation() const { return generation_; }

 private:
  // SHA-256 of every live token -> what it grants.
  using TokenIndex = std::map<std::string, std::shared_ptr<const TokenGrant>, std::less<>>;
  class Editor;

  Snapshot() = default;

  uint64_t generation_ = 0;
  TenantMap tenants_;
  std::shared_ptr<const TokenIndex> grant_by_token_sha256_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_SNAPSHOT_H_
