// EtcdStorage, following: the watch that delivers every change to the listener,
// in order, and reloads when it cannot.
#include "server/keystore/etcd/etcd_storage.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/keystore/etcd/record_envelope.h"
#include "server/keystore/kek.h"
#include "server/log.h"

namespace sealbox::server::etcd {

void EtcdStorage::Follow(uint64_t revision, StorageListener* listener) {
  {
    absl::MutexLock lock(&deliver_mu_);
    listener_ = listener;
    delivered_ = revision;
  }
  watcher_ = std::thread([this] { WatchLoop(); });
  heartbeat_ = std::thread([this] { HeartbeatLoop(); });
}

void EtcdStorage::Deliver(std::vector<RecordChange> changes, uint64_t revision) {
  absl::MutexLock lock(&deliver_mu_);
  if (revision <= delivered_ || listener_ == nullptr) return;
  if (holding_) {
    held_.emplace_back(std::move(changes), revision);
    return;
  }
  listener_->Apply(changes, revision);
  delivered_ = revision;
}

bool EtcdStorage::WaitDelivered(uint64_t revision, absl::Duration patience) {
  absl::MutexLock lock(&deliver_mu_);
  auto reached = [this, revision]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(deliver_mu_) { return delivered_ >= revision; };
  return deliver_mu_.AwaitWithTimeout(absl::Condition(&reached), patience);
}

void EtcdStorage::SetReachable(bool reachable, absl::string_view why) {
  absl::MutexLock lock(&deliver_mu_);
  if (listener_ != nullptr) listener_->Reachable(reachable, why);
}

absl::Status EtcdStorage::ReloadAll(absl::string_view reason) {
  auto contents = Load();
  if (!contents.ok()) return contents.status();
  absl::MutexLock lock(&deliver_mu_);
  if (contents->generation <= delivered_ || listener_ == nullptr) return absl::OkStatus();
  listener_->Reload(*contents);
  delivered_ = contents->generation;
  if (!reason.empty()) {
    Log("keystore_reloaded")
        .Add("store", Describe())
        .Add("revision", static_cast<int64_t>(delivered_))
        .Add("reason", reason);
  }
  return absl::OkStatus();
}

absl::Status EtcdStorage::Refresh() { return ReloadAll(""); }

void EtcdStorage::HandleEvents(const etcdserverpb::WatchResponse& response) {
  std::vector<RecordChange> changes;
  int64_t revision = 0;
  auto flush = [&] {
    if (revision > 0) Deliver(std::move(changes), static_cast<uint64_t>(revision));
    changes.clear();
  };
  for (const mvccpb::Event& event : response.events()) {
    const mvccpb::KeyValue& kv = event.kv();
    if (kv.mod_revision() != revision) {
      flush();  // one commit's changes together, each commit in order
      revision = kv.mod_revision();
    }
    std::optional<RecordName> name = layout_.Parse(kv.key());
    if (!name.has_value()) {
      if (layout_.IsMarker(kv.key()) && event.type() == mvccpb::Event_EventType_DELETE) {
        Log("keystore_marker_deleted", "error")
            .Add("store", Describe())
            .Add("detail", "someone deleted the keystore's marker; serving what is loaded");
      }
      continue;
    }
    if (event.type() == mvccpb::Event_EventType_DELETE) {
      changes.emplace_back(*name, std::nullopt);
      continue;
    }
    auto record = Decode(kv, name);
    if (!record.ok()) {
      // Only someone writing etcd by hand gets here: the record keeps its last good
      // value in this replica, and the logs say why.
      Log("keystore_record_refused", "error")
          .Add("store", Describe())
          .Add("error", record.status().message());
      continue;
    }
    changes.emplace_back(*name, *std::move(record));
  }
  flush();
}

absl::Status EtcdStorage::WatchOnce(bool& created) {
  created = false;
  // Known (so cancellable by Stop and RestartWatch) before the stream is opened:
  // opening it waits for a connection.
  auto context = std::make_unique<grpc::ClientContext>();
  bool from_now;
  {
    absl::MutexLock lock(&stream_mu_);
    if (stopping_.HasBeenNotified()) return absl::CancelledError("stopping");
    stream_context_ = context.get();
    restart_watch_ = false;  // this stream is the restart asked for
    from_now = std::exchange(resume_from_now_, false);
  }
  auto watch = client_->Watch(context.get());
  if (!watch.ok()) {
    absl::MutexLock lock(&stream_mu_);
    stream_context_ = nullptr;
    return watch.status();
  }
  uint64_t from = 0;  // 0: from etcd's revision now
  {
    // A stream from now holds what it delivers until the relist it was started for
    // is in (Relist): until then there is a gap before it.
    absl::MutexLock lock(&deliver_mu_);
    holding_ = from_now;
    held_.clear();
    if (!from_now) from = delivered_ + 1;
  }
  etcdserverpb::WatchRequest request;
  etcdserverpb::WatchCreateRequest* create = request.mutable_create_request();
  create->set_key(layout_.prefix());
  create->set_range_end(layout_.prefix_end());
  create->set_start_revision(static_cast<int64_t>(from));
  absl::Status ended = absl::UnavailableError("the watch ended");
  if (watch->stream->Write(request)) {
    etcdserverpb::WatchResponse response;
    while (watch->stream->Read(&response)) {
      if (response.compact_revision() > 0) {
        ended = absl::OutOfRangeError(absl::StrCat("the watch's revision ", from,
                                                   " was compacted (etcd keeps from ",
                                                   response.compact_revision(), ")"));
        context->TryCancel();
        break;
      }
      if (response.canceled()) {
        ended = absl::UnavailableError(
            absl::StrCat("etcd cancelled the watch: ", response.cancel_reason()));
        context->TryCancel();
        break;
      }
      if (response.created()) {
        created = true;
        if (from_now) {
          absl::MutexLock lock(&stream_mu_);
          resumed_at_ = std::max<int64_t>(1, response.header().revision());
        }
      }
      HandleEvents(response);
    }
  }
  grpc::Status finished = watch->stream->Finish();
  bool restarted;
  {
    absl::MutexLock lock(&stream_mu_);
    stream_context_ = nullptr;
    restarted = restart_watch_;
  }
  // Moved on purpose, to an endpoint that answers: not this one's failure.
  if (!restarted && (!created || absl::IsUnavailable(ended))) {
    client_->EndpointFailed(watch->endpoint, watch->connection.get());
  }
  if (absl::IsUnavailable(ended) && !finished.ok()) {
    ended = absl::UnavailableError(absl::StrCat("etcd: ", finished.error_message()));
  }
  return ended;
}

void EtcdStorage::RestartWatch() {
  absl::MutexLock lock(&stream_mu_);
  restart_watch_ = true;
  if (stream_context_ != nullptr) stream_context_->TryCancel();
}

bool EtcdStorage::TakeRestart() {
  absl::MutexLock lock(&stream_mu_);
  const bool restart = restart_watch_;
  restart_watch_ = false;
  return restart;
}

void EtcdStorage::WatchLoop() {
  absl::Duration backoff = absl::Milliseconds(100);
  int failures = 0;  // in a row, since the last stream that worked
  while (!stopping_.HasBeenNotified()) {
    bool created = false;
    absl::Status ended = WatchOnce(created);
    if (stopping_.HasBeenNotified()) break;
    if (TakeRestart()) {
      failures = 0;
      backoff = absl::Milliseconds(100);
      continue;
    }
    if (absl::IsOutOfRange(ended)) {
      // The revisions in between are gone: start over from a whole load.
      ended = ReloadAll("watch compacted");
      if (ended.ok()) continue;
    }
    if (created) {
      failures = 0;
      backoff = absl::Milliseconds(100);
    }
    // A stream that had worked is tried again at once (on the next endpoint: one
    // member going away is not an outage); after that, with backoff, unless the
    // heartbeat finds a member that answers first (RestartWatch).
    if (++failures == 1) continue;
    {
      absl::MutexLock lock(&stream_mu_);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stream_mu_) {
        return restart_watch_ || stopping_.HasBeenNotified();
      };
      stream_mu_.AwaitWithTimeout(absl::Condition(&woken), backoff);
    }
    backoff = std::min(backoff * 2, absl::Milliseconds(500));
  }
}

}  // namespace sealbox::server::etcd
