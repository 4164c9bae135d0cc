// The keystore: every tenant, token hash and key version, wrapped under the KEK in a
// store (a file, or etcd shared by replicas), and held in memory as an immutable
// snapshot that is swapped atomically. Readers (the data plane) never take a lock
// and never wait on the store.
//
//   server/keystore/storage.h        the seam: records, transactions, following
//   server/keystore/file_storage.h   the file backend
//   server/keystore/etcd/            the etcd backend
//   server/keystore/snapshot.h       the in-memory view: KeyEntry, Snapshot
//   server/keystore/info.h           what admin calls return: KeyInfo, TenantInfo
//   server/keystore/names.h          what tenant and key names may be
//   server/keystore/tokens.h         bearer tokens
#ifndef SEALBOX_SERVER_KEYSTORE_KEYSTORE_H_
#define SEALBOX_SERVER_KEYSTORE_KEYSTORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/keystore/freshness.h"
#include "server/keystore/health.h"
#include "server/keystore/info.h"
#include "server/keystore/snapshot.h"
#include "server/keystore/storage.h"

namespace sealbox::server {

struct KeystoreOpenOptions {
  // Create an empty keystore if the store has none (--init).
  bool create = false;
  // While the store cannot be reached (UNAVAILABLE), keep trying in the background
  // instead of failing Open; until loaded, Loaded() says why nothing is served.
  bool keep_trying = false;
  // keep_trying only: called once, from the loading thread, when loading then fails
  // for a reason retrying cannot fix (a wrong KEK, no keystore, damage).
  std::function<void(const absl::Status&)> on_failure;
  // Called, from the store's thread, whenever Writable() changes.
  std::function<void(bool writable)> on_writable;
  // The shortest rotation period SetRotationPeriod accepts.
  absl::Duration min_rotation_period = absl::Hours(1);
  // How long the snapshot may go without being proven current with the store before
  // Serving() refuses (--max-staleness; freshness.h). Infinite: never.
  absl::Duration max_staleness = absl::InfiniteDuration();
};

class Keystore {
 public:
  // Opens the keystore kept in `storage`: Prepare (creating or rewrapping), then
  // Load, then Follow. Errors, with clear messages: NOT_FOUND (no keystore and no
  // `create`), FAILED_PRECONDITION (a different KEK), DATA_LOSS (damage),
  // UNAVAILABLE (the store cannot be reached, unless `keep_trying`).
  static absl::StatusOr<std::unique_ptr<Keystore>> Open(std::unique_ptr<KeystoreStorage> storage,
                                                        KeystoreOpenOptions options = {});

  // Whether opening found records under the previous KEK and rewrote them under the
  // current one.
  bool rewrapped_at_open() const;

  // The current snapshot (empty until loaded). Lock-free for readers.
  std::shared_ptr<const Snapshot> snapshot() const;

  // OK once loaded; UNAVAILABLE, saying why, before.
  absl::Status Loaded() const;
  // OK while loaded and the store can be reached; UNAVAILABLE, saying why, when not.
  absl::Status Writable() const;
  // Writable(), waiting up to `patience` for a store that cannot be reached to come
  // back: an election, or a heartbeat that was only slow, lasts a moment.
  absl::Status WaitUntilWritable(absl::Duration patience) const;
  // OK while loaded and proven current with the store within max_staleness:
  // whether a call may be served from the snapshot. UNAVAILABLE, saying why and
  // since when, when not. Cheap: a clock read and two atomic loads once loaded.
  absl::Status Serving() const;
  KeystoreHealth Health() const;

  // Brings the snapshot up to date with the store as it is now (a file another
  // process changed, etcd changes not yet seen), before returning.
  absl::Status Refresh();

  // Waits, at most `patience`, until this keystore's snapshot has every change
  // committed to the store before the call: for a caller presenting something this
  // replica does not know yet (a token issued, a key created or rotated a moment ago
  // through another replica). Callers at the same moment share one barrier through
  // the store, and barriers are at least 25 ms apart, so a flood of
  // unknown names costs the store a few writes a second at most. While the store is
  // unreachable it waits (4 callers at most, half a second at most) for it to come
  // back, as a store that has just come back is followed again within that.
  absl::Status CatchUp(absl::Duration patience = absl::Seconds(2));
  // CatchUp, then the snapshot; null when catching up failed.
  std::shared_ptr<const Snapshot> CaughtUpSnapshot();

  // Names the store, for logs and messages.
  std::string Describe() const;

  // Admin operations. Each one is a transaction on the store: reads the records it
  // needs, validates, and commits the change only if none of them changed meanwhile
  // (another replica's change in between is retried from a fresh read, a bounded
  // number of times, then ABORTED). It returns once the change is committed and in
  // this keystore's snapshot. Errors: INVALID_ARGUMENT (bad names, bad material),
  // NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION (e.g. destroying the primary
  // version), UNAVAILABLE (the store cannot be reached). Messages never carry key
  // material or tokens.
  absl::StatusOr<TenantInfo> CreateTenant(const std::string& name);
  absl::Status DeleteTenant(const std::string& name);
  absl::StatusOr<std::vector<TenantInfo>> ListTenants() const;
  // INVALID_ARGUMENT for a bad scope (TokenAccess::Create), a negative ttl, or a
  // max_ttl without a ttl or shorter than it.
  absl::StatusOr<IssuedToken> IssueToken(const std::string& tenant, const TokenRequest& request);
  // A token with every permission that never expires.
  absl::StatusOr<IssuedToken> IssueToken(const std::string& tenant,
                                         const std::string& description) {
    TokenRequest request;
    request.description = description;
    return IssueToken(tenant, request);
  }
  // A successor to token `token_id`: its tenant, description and scope, for `ttl`
  // (zero: the lifetime it was issued for), never past its max_expire_time.
  // FAILED_PRECONDITION for a token that does not expire or has reached its
  // max_expire_time; NOT_FOUND when it was revoked meanwhile.
  absl::StatusOr<IssuedToken> RenewToken(const std::string& tenant, const std::string& token_id,
                                         absl::Duration ttl);

  // Admin tokens, kept as tokens of the reserved tenant kAdminTokensTenant (the
  // request's scope is not used: an admin token is full or read-only).
  absl::StatusOr<IssuedToken> IssueAdminToken(const TokenRequest& request, bool read_only);
  absl::Status RevokeAdminToken(const std::string& token_id);
  // Retires the bootstrap admin token (the one a server is configured with), known by
  // its SHA-256: it is refused on every replica from then on. FAILED_PRECONDITION
  // unless an admin token that may change the keystore remains.
  absl::Status RetireBootstrapAdminToken(const std::string& sha256);
  // Live admin tokens (not retired bootstrap tokens).
  std::vector<TokenInfo> ListAdminTokens() const;
  absl::Status RevokeToken(const std::string& tenant, const std::string& token_id);
  // `algorithm` kUnspecified means kAes256Gcm.
  absl::StatusOr<KeyInfo> CreateKey(const std::string& tenant, const std::string& key,
                                    KeyAlgorithm algorithm);
  // A new key (its algorithm from the material's size), or a new primary version of
  // an existing key (the size must match its algorithm). Material that is one byte
  // repeated (all zeros, ...) is INVALID_ARGUMENT.
  absl::StatusOr<KeyInfo> ImportKey(const std::string& tenant, const std::string& key,
                                    absl::Span<const uint8_t> material);
  absl::StatusOr<KeyInfo> RotateKey(const std::string& tenant, const std::string& key);
  // Zero: no automatic rotation. INVALID_ARGUMENT below the options'
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
  // Deletes the tokens (tenant and admin) that expired kExpiredTokenRetention or
  // more before `now`: renewals leave a record per renewal, and a service renewing
  // hourly would otherwise grow the keystore by thousands a year. A token's expiry
  // never changes, so the snapshot decides; a replica that finds one already gone
  // moves on. Returns how many this call deleted.
  static constexpr absl::Duration kExpiredTokenRetention = absl::Hours(7 * 24);
  int DeleteExpiredTokens(absl::Time now);
  absl::StatusOr<KeyInfo> GetKey(const std::string& tenant, const std::string& key) const;
  absl::StatusOr<std::vector<KeyInfo>> ListKeys(const std::string& tenant) const;
  // 1 <= version <= the primary version.
  absl::StatusOr<KeyInfo> SetMinDecryptionVersion(const std::string& tenant, const std::string& key,
                                                  uint32_t version);
  absl::StatusOr<KeyInfo> SetVersionState(const std::string& tenant, const std::string& key,
                                          uint32_t version,
                                          VersionState state);  // kEnabled/kDisabled
  // Wipes the material; the version stays, kDestroyed. Destroying a destroyed
  // version again is OK and changes nothing (it returns the key).
  // Deletes every version below `min_available_version`, material and all, so a
  // key's history stays bounded. Only versions that no longer open may go: it must
  // be at most the minimum decryption version. Irreversible; asking for no more
  // than is already trimmed changes nothing.
  absl::StatusOr<KeyInfo> TrimKey(const std::string& tenant, const std::string& key,
                                  uint32_t min_available_version);
  absl::StatusOr<KeyInfo> DestroyVersion(const std::string& tenant, const std::string& key,
                                         uint32_t version);

  ~Keystore();

 private:
  class Transaction;
  struct State;
  explicit Keystore(std::unique_ptr<State> state);

  // Runs `change` in transactions until one commits (or fails for good); `lock`
  // names the record it changes, so writers of one record in this process take
  // turns instead of racing each other through the store.
  absl::Status Update(const RecordName& lock,
                      const std::function<absl::Status(Transaction&)>& change);
  // Updates one key: `change` gets it (NOT_FOUND when it or its tenant is missing)
  // and returns whether it changed it; a key left as it was is not written again.
  absl::StatusOr<KeyInfo> UpdateKey(
      const std::string& tenant, const std::string& key,
      const std::function<absl::StatusOr<bool>(internal::Key&)>& change);
  // Stores a new token of `tenant` that `fill` describes (it may read records
  // through the transaction); the id and hash are set here.
  absl::StatusOr<IssuedToken> StoreNewToken(
      const std::string& tenant,
      const std::function<absl::Status(Transaction&, internal::Token&)>& fill);
  // Deletes token `token_id` of `tenant`: NOT_FOUND (never echoing the id) without it.
  absl::Status DeleteToken(const std::string& tenant, const std::string& token_id);

  // CatchUp's work, until `deadline`.
  absl::Status WaitForStore(absl::Time deadline);

  std::unique_ptr<State> state_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_KEYSTORE_H_
