// The etcd keystore's heartbeat: proves the listener current, on a thread of its own,
// and brings it back after an outage.
//
//   - Every heartbeat, a linearizable read of etcd's revision, and the watch having
//     delivered it (or, when the newest revision is not ours, a barrier revision of
//     our own), proves the keystore current (CurrentAsOf). etcd's progress requests
//     would save the read, but etcd before 3.4.25/3.5.8 may answer one before the
//     events it covers (etcd issue 15220), and Debian 12 ships 3.4.23.
//   - etcd down: the listener is told at once (Reachable(false)), and every member
//     is dialled afresh many times a second (EtcdClient::FindAnsweringMember); on
//     the first that answers, a small keystore is read afresh while the watch
//     resumes from etcd's revision now (a large one resumes from the last revision
//     seen).
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_HEARTBEAT_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_HEARTBEAT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/keystore/etcd/etcd_client.h"
#include "server/keystore/etcd/etcd_records.h"
#include "server/keystore/etcd/etcd_watch.h"
#include "server/keystore/etcd/listener_feed.h"

namespace sealbox::server::etcd {

class EtcdHeartbeat {
 public:
  // Each must outlive the heartbeat. `interval`: how often the keystore is proven
  // current while etcd answers.
  EtcdHeartbeat(EtcdClient& client, EtcdRecords& records, EtcdWatch& watch, ListenerFeed& feed,
                absl::Duration interval);
  ~EtcdHeartbeat();

  // Starts the thread; the first proof comes at once.
  void Start();
  // Writes the prefix's sync key: its revision is after every earlier change, and
  // the watch delivers changes in order, this one included. At most a second.
  absl::StatusOr<uint64_t> Barrier(absl::Duration timeout);
  // Ends the thread (a search for a member included). Idempotent.
  void Stop();

 private:
  void Loop();
  // Proves the listener current as of `began` (a reading taken before the proof).
  absl::Status ProveCurrent(std::chrono::steady_clock::time_point began);
  // After an outage: resumes the watch, bringing the listener up to date at once.
  void CatchUpAfterOutage();
  // Loads the keystore and hands it to the feed, then what the stream from now held.
  absl::Status Relist();
  // How long a read (or a barrier) may take before its connection counts as stuck.
  absl::Duration ReadTimeout() const;

  EtcdClient& client_;
  EtcdRecords& records_;
  EtcdWatch& watch_;
  ListenerFeed& feed_;
  const absl::Duration interval_;
  std::once_flag stop_once_;  // Stop may be called from several threads
  absl::Notification stopping_;
  std::thread thread_;
  // What reads have recently taken (a moving average, nanoseconds).
  std::atomic<int64_t> read_nanos_{10'000'000};
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_HEARTBEAT_H_
