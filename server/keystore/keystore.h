// The keystore: every tenant, token hash and key version, wrapped under the KEK in a
// store (a file, or etcd shared by replicas), and held in memory as an immutable
// snapshot that is swapped atomically. Readers (the data plane) never take a lock
// and never wait on the store.
//
//   server/keystore/storage.h        the seam: records, transactions, following
//   server/keystore/file/file_storage.h   the file backend
//   server/keystore/etcd/            the etcd backend
//   server/keystore/snapshot.h       the in-memory view: KeyEntry, Snapshot
//   server/keystore/call_snapshot.h  one call's view: its snapshot, and one wait for a fresher
//   server/keystore/info.h           what admin calls return: KeyInfo, TenantInfo
//   server/keystore/names.h          what tenant and key names may be
//   server/keystore/token_records.h  token records (the token format and scopes: server/auth/)
//   server/keystore/tenant_admin.h   the admin rooms: tenants,
//   server/keystore/key_admin.h        keys and versions (with rotation and its schedule),
//   server/keystore/token_admin.h      tenant and admin tokens
//   server/keystore/key_transfer.h     keys in and out, only wrapped
//   server/keystore/keystore_transaction.h  what those rooms write through
//   server/keystore/freshness.h      how long the snapshot may go unconfirmed
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
#include "crypto/format/epochs.h"
#include "server/keystore/call_snapshot.h"
#include "server/keystore/freshness.h"
#include "server/keystore/health.h"
#include "server/keystore/info.h"
#include "server/keystore/key_admin.h"
#include "server/keystore/key_transfer.h"
#include "server/keystore/keystore_transaction.h"
#include "server/keystore/snapshot.h"
#include "server/keystore/storage.h"
#include "server/keystore/tenant_admin.h"
#include "server/keystore/token_admin.h"

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
  // The bound on cached epoch subkeys and how often idle sealing epochs are dropped
  // (--idle-epoch-seconds).
  crypto::Epochs::Limits epochs;
};

// The keystore as its users see it: following the store (loaded, writable, current,
// caught up), and the three admin rooms that change it.
class Keystore final : public SnapshotSource, private KeystoreWriter {
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
  std::shared_ptr<const Snapshot> snapshot() const override;

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
  // SnapshotSource (call_snapshot.h): snapshot(), and CatchUp then the snapshot (null
  // when catching up failed).
  std::shared_ptr<const Snapshot> Current() const override { return snapshot(); }
  std::shared_ptr<const Snapshot> CaughtUp() override;

  // Names the store, for logs and messages.
  std::string Describe() const;

  // The store's KEKs, and every record written again under the current one: what a
  // KEK rotation (server/custody/kek_rotation.h) changes while serving.
  StoreKeks& keks();
  absl::StatusOr<uint64_t> RewrapAll(const RewrapPace& pace);

  // The owner of the keys' epoch subkeys (crypto/format/epochs.h): the snapshots'
  // sealing epochs come from it, and the data plane opens other epochs through it.
  crypto::Epochs& epochs();

  // The admin rooms. Each of their changes is a transaction on the store: reads the
  // records it needs, validates, and commits the change only if none of them changed
  // meanwhile (another replica's change in between is retried from a fresh read, a
  // bounded number of times, then ABORTED). It returns once the change is committed
  // and in this keystore's snapshot. Errors: INVALID_ARGUMENT (bad names, bad
  // material), NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION (e.g. destroying the
  // primary version), UNAVAILABLE (the store cannot be reached). Messages never carry
  // key material or tokens.
  TenantAdmin& tenants() { return tenants_; }
  KeyAdmin& keys() { return keys_; }
  TokenAdmin& tokens() { return tokens_; }
  // Keys in and out only wrapped: import keys, wrapped import, wrapped export.
  KeyTransfer& transfers() { return transfers_; }

  ~Keystore();

 private:
  struct State;
  explicit Keystore(std::unique_ptr<State> state);

  // KeystoreWriter, for the admin rooms.
  absl::Status Update(const RecordName& lock,
                      const std::function<absl::Status(KeystoreTransaction&)>& change) override;
  absl::Duration min_rotation_period() const override;

  // CatchUp's work, until `deadline`.
  absl::Status WaitForStore(absl::Time deadline);

  std::unique_ptr<State> state_;
  TenantAdmin tenants_;
  KeyAdmin keys_;
  TokenAdmin tokens_;
  KeyTransfer transfers_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_KEYSTORE_H_
