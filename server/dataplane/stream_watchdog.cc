#include "server/dataplane/stream_watchdog.h"

#include <algorithm>
#include <vector>

namespace sealbox::server {
namespace {

// The watchdog whose Run() this thread is in, if any. Set by that thread itself, so
// nothing else ever writes it (a std::thread::id member written after the thread
// starts would be a data race).
thread_local const StreamWatchdog* running_watchdog = nullptr;

}  // namespace

StreamWatchdog::StreamWatchdog(absl::Duration idle) : idle_(idle) {
  if (idle_ <= absl::ZeroDuration()) return;
  thread_ = std::thread([this] { Run(); });
}

bool StreamWatchdog::OnWatchdogThread() const { return running_watchdog == this; }

StreamWatchdog::~StreamWatchdog() {
  if (!thread_.joinable()) return;
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  thread_.join();
}

uint64_t StreamWatchdog::Watch(grpc::CallbackServerContext* context) {
  if (!thread_.joinable()) return 0;
  absl::MutexLock lock(&mutex_);
  const uint64_t id = next_id_++;
  streams_.emplace(id, Watched{context, absl::Now()});
  return id;
}

void StreamWatchdog::Touch(uint64_t id) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (id == 0) return;
  const bool locked_here = !OnWatchdogThread();
  if (locked_here) mutex_.Lock();
  auto it = streams_.find(id);
  if (it != streams_.end()) it->second.last_progress = absl::Now();
  if (locked_here) mutex_.Unlock();
}

bool StreamWatchdog::Forget(uint64_t id) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (id == 0) return false;
  const bool locked_here = !OnWatchdogThread();
  if (locked_here) mutex_.Lock();
  bool cancelled = false;
  auto it = streams_.find(id);
  if (it != streams_.end()) {
    cancelled = it->second.cancelled;
    streams_.erase(it);
  }
  if (locked_here) mutex_.Unlock();
  return cancelled;
}

void StreamWatchdog::Run() {
  running_watchdog = this;
  // Checking a few times per timeout keeps the overshoot small.
  const absl::Duration period = std::clamp(idle_ / 4, absl::Milliseconds(10), absl::Seconds(1));
  absl::MutexLock lock(&mutex_);
  while (!mutex_.AwaitWithTimeout(absl::Condition(&stopping_), period)) {
    const absl::Time now = absl::Now();
    std::vector<uint64_t> stalled;
    for (const auto& [id, watched] : streams_) {
      if (!watched.cancelled && now - watched.last_progress >= idle_) stalled.push_back(id);
    }
    for (uint64_t id : stalled) {
      // Looked up again: cancelling one call may have ended (and forgotten) others.
      auto it = streams_.find(id);
      if (it == streams_.end()) continue;
      it->second.cancelled = true;
      it->second.context->TryCancel();
    }
  }
}

}  // namespace sealbox::server
