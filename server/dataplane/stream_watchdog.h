// Ends streams that make no progress: a stream that has neither received a message
// nor had a response taken by its client for `idle` is cancelled, so a stalled or
// never-reading client cannot hold a stream slot (and its buffers) forever.
#ifndef SEALBOX_SERVER_DATAPLANE_STREAM_WATCHDOG_H_
#define SEALBOX_SERVER_DATAPLANE_STREAM_WATCHDOG_H_

#include <cstdint>
#include <map>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"

namespace sealbox::server {

class StreamWatchdog {
 public:
  // `idle` zero: off; Watch returns 0 and no thread runs.
  explicit StreamWatchdog(absl::Duration idle);
  ~StreamWatchdog();
  StreamWatchdog(const StreamWatchdog&) = delete;
  StreamWatchdog& operator=(const StreamWatchdog&) = delete;

  absl::Duration idle() const { return idle_; }

  // Starts watching a stream; its id for the calls below.
  uint64_t Watch(grpc::CallbackServerContext* context);
  // The stream made progress: a message arrived, or a response was sent.
  void Touch(uint64_t id);
  // The stream is ending (its reactor finishes it). True when the watchdog cancelled it.
  bool Forget(uint64_t id);

 private:
  struct Watched {
    grpc::CallbackServerContext* context;
    absl::Time last_progress;
    bool cancelled = false;
  };
  void Run();
  // Cancelling a call may run its reactions at once on the cancelling thread, which
  // already holds the lock; those calls must not take it again.
  bool OnWatchdogThread() const;

  const absl::Duration idle_;
  absl::Mutex mutex_;
  std::map<uint64_t, Watched> streams_ ABSL_GUARDED_BY(mutex_);
  uint64_t next_id_ ABSL_GUARDED_BY(mutex_) = 1;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_STREAM_WATCHDOG_H_
