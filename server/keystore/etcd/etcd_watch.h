// The etcd keystore's watch: one stream at a time over the prefix, on a thread of its
// own, handing each commit's changes to the listener in order (listener_feed.h).
//
//   - A stream starts from the revision after the last one the listener was told,
//     so a new stream (after a member went away, or Restart) skips nothing.
//   - A stream whose revision was compacted away reloads everything at one revision
//     instead (readers list, then watch; they never guess what changed).
//   - ResumeFromNow starts a stream from etcd's revision now, which is in sync at
//     once, where a resumed one waits for etcd's resync loop; the heartbeat then
//     reads the keystore afresh to close the gap before it (etcd_heartbeat.h).
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_WATCH_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_WATCH_H_

#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/client_context.h"
#include "server/keystore/etcd/etcd_client.h"
#include "server/keystore/etcd/etcd_records.h"
#include "server/keystore/etcd/listener_feed.h"

namespace sealbox::server::etcd {

class EtcdWatch {
 public:
  // Each must outlive the watch.
  EtcdWatch(EtcdClient& client, EtcdRecords& records, ListenerFeed& feed);
  ~EtcdWatch();

  // Starts the thread, from the revision after the feed's (ListenerFeed::Start).
  void Start();
  // Ends the stream and starts another at once, on the current endpoint.
  void Restart();
  // Restarts from etcd's revision now, the feed holding what the stream delivers
  // until ListenerFeed::Relisted; whether etcd created the stream within `patience`.
  bool ResumeFromNow(absl::Duration patience);
  // Loads everything and hands it to the feed if newer; `reason`, if any, is logged.
  absl::Status Reload(absl::string_view reason);
  // Ends the stream and the thread. Idempotent.
  void Stop();

 private:
  void Loop();
  // One stream, until it ends: OUT_OF_RANGE when compacted away, else why.
  absl::Status WatchOnce(bool& created);
  void HandleEvents(const etcdserverpb::WatchResponse& response);
  // Whether a restart was asked for since the stream began; clears it.
  bool TakeRestart();

  EtcdClient& client_;
  EtcdRecords& records_;
  ListenerFeed& feed_;

  // The stream: Restart, ResumeFromNow and Stop reach it from other threads.
  absl::Mutex mu_;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool restart_ ABSL_GUARDED_BY(mu_) = false;
  // The next stream starts from etcd's revision now; once etcd has created it, it
  // sets the revision it was created at.
  bool resume_from_now_ ABSL_GUARDED_BY(mu_) = false;
  int64_t resumed_at_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Notification stopping_;  // notified under mu_, so only once
  std::thread thread_;
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_WATCH_H_
