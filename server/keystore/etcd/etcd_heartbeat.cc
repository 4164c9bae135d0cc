#include "server/keystore/etcd/etcd_heartbeat.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/log.h"

namespace sealbox::server::etcd {
namespace {

// How long a heartbeat's read may take before its connection counts as stuck: ten
// times what reads have recently taken, within these limits. Short, because a cut
// that drops packets shows only as silence, and the sooner it is noticed the sooner
// new connections are tried; a read that was merely slow costs a new connection.
constexpr absl::Duration kLeastReadTimeout = absl::Milliseconds(200);
constexpr absl::Duration kMostReadTimeout = absl::Seconds(2);
// How long the watch may take to deliver a revision etcd has confirmed: first one
// that may be another writer's, then a barrier of our own.
constexpr absl::Duration kWatchLag = absl::Milliseconds(50);
constexpr absl::Duration kBarrierPatience = absl::Seconds(1);
// The most records read afresh after an outage rather than waited for (one page).
constexpr int64_t kRelistAtMost = 2000;
// After a member answered a probe and still failed the proof (refused permission,
// say): the least pause before searching again, doubling up to a second.
constexpr absl::Duration kRetryPause = absl::Milliseconds(25);

}  // namespace

EtcdHeartbeat::EtcdHeartbeat(EtcdClient& client, EtcdRecords& records, EtcdWatch& watch,
                             ListenerFeed& feed, absl::Duration interval)
    : client_(client), records_(records), watch_(watch), feed_(feed), interval_(interval) {}

EtcdHeartbeat::~EtcdHeartbeat() { Stop(); }

void EtcdHeartbeat::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void EtcdHeartbeat::Stop() {
  std::call_once(stop_once_, [this] { stopping_.Notify(); });
  if (thread_.joinable()) thread_.join();
}

absl::StatusOr<uint64_t> EtcdHeartbeat::Barrier(absl::Duration timeout) {
  // A caller waiting for a token it does not know gives up within a second in a cut
  // (a write etcd takes longer than that to commit is lost in a partition anyway).
  timeout = std::min(timeout, kBarrierPatience);
  const absl::Time deadline = absl::Now() + timeout;
  etcdserverpb::TxnRequest txn;
  txn.add_success()->mutable_request_put()->set_key(records_.layout().Sync());
  // Lost in flight, it is simply written again: a barrier carries nothing.
  auto response = client_.Txn(txn, timeout);
  if (!response.ok() && absl::Now() < deadline) {
    response = client_.Txn(txn, deadline - absl::Now());
  }
  if (!response.ok()) return response.status();
  return static_cast<uint64_t>(response->header().revision());
}

absl::Status EtcdHeartbeat::ProveCurrent(std::chrono::steady_clock::time_point began) {
  // At or after every revision committed before `began`.
  absl::StatusOr<int64_t> revision =
      client_.CurrentRevision(records_.layout().Marker(), ReadTimeout());
  if (!revision.ok()) return revision.status();
  // A moving average of what reads take, a new one weighing a quarter.
  const int64_t took =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began)
          .count();
  read_nanos_.store((3 * read_nanos_.load() + took) / 4);
  if (!feed_.WaitDelivered(static_cast<uint64_t>(*revision), kWatchLag)) {
    // Either the newest revision is another writer's (the watch sees only our
    // prefix) or the watch is behind: a revision of our own settles which.
    absl::StatusOr<uint64_t> barrier = Barrier(kBarrierPatience);
    if (!barrier.ok()) return barrier.status();
    if (!feed_.WaitDelivered(*barrier, kBarrierPatience)) {
      // Its member is behind the cluster, or its connection is dead: start over.
      watch_.Restart();
      return absl::UnavailableError(absl::StrCat("the watch has not delivered etcd revision ",
                                                 *barrier, " within ",
                                                 absl::FormatDuration(kBarrierPatience)));
    }
  }
  feed_.CurrentAsOf(began);
  return absl::OkStatus();
}

// A watch resumed from a past revision delivers nothing until etcd's resync loop
// (every 100 ms) reaches it; a watch from etcd's revision now is in sync at once. So
// a small keystore resumes its watch from now and then is read afresh at a revision
// no older (what informers call a relist): the read covers everything before the
// watch, the watch everything after the read. A large one, or a relist that fails,
// resumes the watch where it left off.
void EtcdHeartbeat::CatchUpAfterOutage() {
  absl::StatusOr<int64_t> records = records_.Count();
  if (records.ok() && *records <= kRelistAtMost) {
    absl::Status relisted = watch_.ResumeFromNow(ReadTimeout())
                                ? Relist()
                                : absl::UnavailableError("the watch did not resume");
    if (relisted.ok()) return;
    Log("keystore_relist_failed", "warning")
        .Add("store", records_.Describe())
        .Add("error", relisted.message());
  }
  watch_.Restart();  // from where the listener is: nothing skipped
}

absl::Status EtcdHeartbeat::Relist() {
  auto contents = records_.Load();  // at a revision no older than the watch's start
  if (!contents.ok()) return contents.status();
  std::optional<uint64_t> caught_up = feed_.Relisted(*contents);
  if (caught_up.has_value()) {
    Log("keystore_reloaded")
        .Add("store", records_.Describe())
        .Add("revision", static_cast<int64_t>(*caught_up))
        .Add("reason", "caught up after an outage");
  }
  return absl::OkStatus();
}

absl::Duration EtcdHeartbeat::ReadTimeout() const {
  return std::clamp(10 * absl::Nanoseconds(read_nanos_.load()), kLeastReadTimeout,
                    kMostReadTimeout);
}

void EtcdHeartbeat::Loop() {
  int failures = 0;  // in a row
  while (!stopping_.HasBeenNotified()) {
    const auto began = std::chrono::steady_clock::now();
    absl::Status proved = ProveCurrent(began);
    if (proved.ok()) {
      if (failures > 0) feed_.Reachable(true, "");
      failures = 0;
      client_.TidyProbes();
      const absl::Duration spent = absl::FromChrono(std::chrono::steady_clock::now() - began);
      if (stopping_.WaitForNotificationWithTimeout(interval_ - spent)) break;
      continue;
    }
    // Unreachable from the first failure: calls that would wait for the store (a
    // token not known here) stop piling up at once, and a slow answer costs only the
    // moment until a member answers again.
    ++failures;
    feed_.Reachable(false, proved.message());
    if (failures > 2) {
      const absl::Duration pause =
          std::min(kRetryPause * (1 << std::min(failures - 3, 6)), absl::Seconds(1));
      if (stopping_.WaitForNotificationWithTimeout(pause)) break;
    }
    // Dial every member afresh until one answers, and follow it: the next proof
    // comes as soon as the network is back, not after gRPC's or TCP's backoff.
    std::optional<size_t> found = client_.FindAnsweringMember(records_.layout().Marker(),
                                                              absl::InfiniteDuration(), stopping_);
    if (found.has_value()) {
      Log("keystore_member_answered")
          .Add("store", records_.Describe())
          .Add("endpoint", static_cast<int64_t>(*found))
          .Add("detail", "following it from here: watch restarted, heartbeat next");
      CatchUpAfterOutage();
    }
  }
}

}  // namespace sealbox::server::etcd
