// Where the keystore is kept: the seam between its logic (keystore.h) and a backend.
//
//   server/keystore/file/file_storage.h        one KEK-wrapped file: one replica, dev, tests
//   server/keystore/etcd/etcd_storage.h   one KEK-wrapped etcd key per record: replicas
//
// The keystore is a set of records, each a tenant, one of its keys (with every
// version) or one of its tokens. The logic reads records and commits changes in
// transactions; a backend makes each transaction atomic and isolated, and tells the
// keystore of every committed change, its own and other replicas', in order.
#ifndef SEALBOX_SERVER_KEYSTORE_STORAGE_H_
#define SEALBOX_SERVER_KEYSTORE_STORAGE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sealbox/internal/keystore_record.pb.h"
#include "server/keystore/kek_ring.h"
#include "server/keystore/keystore_file.h"

namespace sealbox::server {

// Which record: a tenant, or one of its keys or tokens.
struct RecordName {
  enum class Kind { kTenant, kKey, kToken };

  static RecordName Tenant(std::string tenant);
  static RecordName Key(std::string tenant, std::string key);
  static RecordName Token(std::string tenant, std::string id);

  // For messages and logs: "tenant acme", "key acme/db", "token acme/0123456789abcdef".
  std::string ToString() const;

  bool operator==(const RecordName& other) const {
    return kind == other.kind && tenant == other.tenant && name == other.name;
  }

  Kind kind = Kind::kTenant;
  std::string tenant;
  std::string name;  // the key's name or the token's id; empty for a tenant
};

// A committed change: a record's new value, or its deletion. Deleting a tenant
// deletes its keys and tokens with it. Wipes key material when it goes away.
struct RecordChange {
  RecordChange() = default;
  RecordChange(RecordName name, std::optional<internal::Record> value)
      : name(std::move(name)), value(std::move(value)) {}
  RecordChange(RecordChange&&) = default;
  RecordChange& operator=(RecordChange&&) = default;
  ~RecordChange();

  RecordName name;
  std::optional<internal::Record> value;  // nullopt: deleted
};

// Wipes the key material a record holds (protobuf does not wipe what it frees).
void WipeRecord(internal::Record& record);

// The name of a record value as stored under `tenant`, or INVALID_ARGUMENT for a
// value of no kind. Used to check that a value belongs where it was found.
absl::StatusOr<RecordName> NameOf(const std::string& tenant, const internal::Record& record);

// Every record of a whole keystore, as puts, tenants before their keys and tokens.
std::vector<RecordChange> RecordsOf(const internal::KeystoreFile& file);

// Orders tenants, keys, tokens and versions by name, so that two keystores with the
// same records compare equal whatever order they were written in.
void SortKeystore(internal::KeystoreFile& file);

// Told by a backend, from its own thread, of what the store holds as it changes.
class StorageListener {
 public:
  virtual ~StorageListener() = default;
  // The whole keystore at `contents.generation`: after a lost watch, or when
  // another process rewrote the file.
  virtual void Reload(const KeystoreContents& contents) = 0;
  // The changes one commit made at `revision`, in the order they were made.
  virtual void Apply(const std::vector<RecordChange>& changes, uint64_t revision) = 0;
  // Whether the store can be reached (a write can commit). `why` says what failed.
  virtual void Reachable(bool reachable, absl::string_view why) = 0;
  // Proof that the listener is current: everything committed to the store before
  // `as_of` (a steady-clock reading taken before the proof began) has been told.
  // Backends prove it again every heartbeat (freshness.h).
  virtual void CurrentAsOf(std::chrono::steady_clock::time_point as_of) = 0;
};

// One transaction. Reads see the store as it is now; Commit applies every change at
// once, and only if nothing read has changed since.
class StorageTransaction {
 public:
  virtual ~StorageTransaction() = default;
  // The record as stored now, or nullopt when there is none.
  virtual absl::StatusOr<std::optional<internal::Record>> Read(const RecordName& name) = 0;
  // Commits `changes` atomically: the revision they were committed at. ABORTED when a
  // record read has changed meanwhile (another writer won: start over with a new
  // transaction); UNAVAILABLE when the store cannot be reached, or stopped answering
  // at a moment when the change may or may not have been committed.
  virtual absl::StatusOr<uint64_t> Commit(std::vector<RecordChange> changes) = 0;
};

// How RewrapAll goes: at most so many records a second (0: as fast as it goes), and
// who hears how many are done after each write.
struct RewrapPace {
  double records_per_second = 0;
  std::function<void(uint64_t rewrapped)> progress;
  // Asked between writes: true stops the rewrap (CANCELLED), e.g. at shutdown.
  std::function<bool()> cancelled;
};

// A place a keystore is kept. Every method may be called from any thread.
class KeystoreStorage {
 public:
  virtual ~KeystoreStorage() = default;

  // Names the store for messages and logs: "keystore /var/lib/sealbox/keystore.sbx",
  // "etcd keystore /sealbox/ at 10.0.0.1:2379".
  virtual std::string Describe() const = 0;

  // Gets the store ready to load, before the first Load: creates an empty keystore
  // when there is none and `create` allows, and rewraps whatever is still under the
  // previous KEK. Returns whether anything was rewrapped. NOT_FOUND (no keystore),
  // FAILED_PRECONDITION (a different KEK), DATA_LOSS, UNAVAILABLE (try again).
  virtual absl::StatusOr<bool> Prepare(bool create) = 0;

  // The whole keystore at one revision. Errors as for Prepare.
  virtual absl::StatusOr<KeystoreContents> Load() = 0;

  virtual absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin() = 0;

  // Follows the store from just after `revision` (what Load returned), telling
  // `listener` of every change from a thread of its own, until Stop (or the
  // storage's destruction): the listener must outlive both. A backend that applies
  // its own commits tells the listener before Commit returns. Every heartbeat (an
  // option of each backend) it proves again that the listener is current
  // (CurrentAsOf); while it cannot, it looks for the store often enough to be
  // current again soon after the store is back.
  virtual void Follow(uint64_t revision, StorageListener* listener) = 0;

  // Brings the listener up to date with the store as it is now, before returning.
  virtual absl::Status Refresh() = 0;

  // A revision at or after every change committed before the call, which the
  // listener has been or will be told of: once the listener is there, nothing
  // committed earlier is missing. The file backend reloads a changed file here
  // instead and returns 0. UNAVAILABLE when the store does not answer within
  // `timeout`.
  virtual absl::StatusOr<uint64_t> Barrier(absl::Duration timeout) = 0;

  // Writes a whole keystore into a store that holds none (--migrate-keystore,
  // --export-keystore), so that no server ever sees it half-written; refuses a store
  // that holds one (ALREADY_EXISTS, FAILED_PRECONDITION).
  virtual absl::Status Import(const KeystoreContents& contents) = 0;

  // The KEKs records are read with and written under (kek_ring.h), which a KEK
  // rotation changes while serving.
  virtual StoreKeks& keks() = 0;

  // Writes again, under the current KEK, every record that is not under it; returns
  // how many it wrote. Each write is conditioned like any other, so this is safe
  // beside other writers and other replicas doing the same.
  virtual absl::StatusOr<uint64_t> RewrapAll(const RewrapPace& pace) = 0;

  // Stops following. Idempotent; the destructor calls it.
  virtual void Stop() = 0;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_STORAGE_H_
