// The keystore as one call sees it: the snapshot the call began with, and at most one
// wait for a fresher one.
//
// A replica learns of a change made through another one within milliseconds, but a
// client balancing over replicas can create a key (or rotate one, or issue a token)
// through one and use it on another within those milliseconds. A call that names a
// key or a version its snapshot lacks may therefore wait, once, for every change
// committed to the store before it (Keystore::CatchUp). Once per call, whatever the
// call is: a batch's thousand unknown keys cost one wait, not a thousand.
#ifndef SEALBOX_SERVER_KEYSTORE_CALL_SNAPSHOT_H_
#define SEALBOX_SERVER_KEYSTORE_CALL_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "server/keystore/snapshot.h"

namespace sealbox::server {

// Where snapshots come from: what the keystore offers a call (Keystore implements it).
class SnapshotSource {
 public:
  virtual ~SnapshotSource() = default;
  // The snapshot in force now.
  virtual std::shared_ptr<const Snapshot> Current() const = 0;
  // A snapshot with every change committed to the store before the call, after a
  // short wait; null when the store could not be reached.
  virtual std::shared_ptr<const Snapshot> CaughtUp() = 0;
};

// Copyable; not thread-safe (a call uses its own, a stream under its lock).
class CallSnapshot {
 public:
  // `source` null: the call never waits (a health probe, a test).
  explicit CallSnapshot(std::shared_ptr<const Snapshot> snapshot = nullptr,
                        SnapshotSource* source = nullptr)
      : snapshot_(std::move(snapshot)), source_(source) {}

  const Snapshot& get() const { return *snapshot_; }
  const std::shared_ptr<const Snapshot>& shared() const { return snapshot_; }

  // The snapshot to look `key` up in for `version` (0: any): the call's own, or, the
  // first time in this call that it lacks the key or holds only older versions, a
  // fresher one, which the call then keeps.
  const Snapshot& For(const std::string& tenant, const std::string& key, uint32_t version);

  // Whether `version` of `key` is still unknown because this call's wait for the
  // store failed: a version sealed elsewhere a moment ago, not a forgery.
  bool StoreUnreachableFor(const std::string& tenant, const std::string& key,
                           uint32_t version) const;

 private:
  bool Lacks(const std::string& tenant, const std::string& key, uint32_t version) const;

  std::shared_ptr<const Snapshot> snapshot_;
  SnapshotSource* source_;
  bool waited_ = false;
  bool wait_failed_ = false;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_CALL_SNAPSHOT_H_
