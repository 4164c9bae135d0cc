// What the etcd keystore's listener has been told, and the order it is told in: each
// commit once, revisions only forward, whichever part (the watch, a reload, a
// catch-up) has it to tell. No etcd here: the watch and the heartbeat hand it what
// they read.
//
// A watch resumed from etcd's revision now (after an outage) leaves a gap before it
// until the keystore has been read afresh: meanwhile its changes are held, and
// handed on after that read (Relisted).
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_LISTENER_FEED_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_LISTENER_FEED_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/keystore/storage.h"

namespace sealbox::server::etcd {

class ListenerFeed {
 public:
  // From now on `listener` is told of what comes after `revision`.
  void Start(StorageListener* listener, uint64_t revision);

  // A watch stream begins: the revision it starts from (the one after the last told),
  // or, `from_now`, 0 (etcd's revision now), holding what it delivers until Relisted.
  uint64_t BeginStream(bool from_now);

  // One commit's changes, unless the listener has been told of `revision`.
  void Apply(std::vector<RecordChange> changes, uint64_t revision);
  // The whole keystore, if newer than what the listener has; whether it was.
  bool Reload(const KeystoreContents& contents);
  // The fresh read a stream from now waited for: `contents` if newer, then what the
  // stream held back. The revision the listener is at; nullopt (and an ordinary
  // Reload) when no stream was holding (it ended, and one from the last revision
  // took its place).
  std::optional<uint64_t> Relisted(const KeystoreContents& contents);

  // Waits until the listener has been told of `revision`; false after `patience`.
  bool WaitDelivered(uint64_t revision, absl::Duration patience);

  // Passed on to the listener (storage.h).
  void Reachable(bool reachable, absl::string_view why);
  void CurrentAsOf(std::chrono::steady_clock::time_point as_of);

 private:
  // One mutex: the listener is told one thing at a time, in order.
  absl::Mutex mu_;
  StorageListener* listener_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t delivered_ ABSL_GUARDED_BY(mu_) = 0;
  bool holding_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::pair<std::vector<RecordChange>, uint64_t>> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_LISTENER_FEED_H_
