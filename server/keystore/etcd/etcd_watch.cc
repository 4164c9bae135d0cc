#include "server/keystore/etcd/etcd_watch.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/log.h"

namespace sealbox::server::etcd {

EtcdWatch::EtcdWatch(EtcdClient& client, EtcdRecords& records, ListenerFeed& feed)
    : client_(client), records_(records), feed_(feed) {}

EtcdWatch::~EtcdWatch() { Stop(); }

void EtcdWatch::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void EtcdWatch::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_.HasBeenNotified()) stopping_.Notify();
    if (context_ != nullptr) context_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

void EtcdWatch::Restart() {
  absl::MutexLock lock(&mu_);
  restart_ = true;
  if (context_ != nullptr) context_->TryCancel();
}

bool EtcdWatch::TakeRestart() {
  absl::MutexLock lock(&mu_);
  return std::exchange(restart_, false);
}

bool EtcdWatch::ResumeFromNow(absl::Duration patience) {
  {
    absl::MutexLock lock(&mu_);
    resume_from_now_ = true;
    resumed_at_ = 0;
  }
  Restart();
  absl::MutexLock lock(&mu_);
  auto resumed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return resumed_at_ > 0 || stopping_.HasBeenNotified();
  };
  return mu_.AwaitWithTimeout(absl::Condition(&resumed), patience) && resumed_at_ > 0;
}

absl::Status EtcdWatch::Reload(absl::string_view reason) {
  auto contents = records_.Load();
  if (!contents.ok()) return contents.status();
  if (feed_.Reload(*contents) && !reason.empty()) {
    Log("keystore_reloaded")
        .Add("store", records_.Describe())
        .Add("revision", static_cast<int64_t>(contents->generation))
        .Add("reason", reason);
  }
  return absl::OkStatus();
}

void EtcdWatch::HandleEvents(const etcdserverpb::WatchResponse& response) {
  const Layout& layout = records_.layout();
  std::vector<RecordChange> changes;
  int64_t revision = 0;
  auto flush = [&] {
    if (revision > 0) feed_.Apply(std::move(changes), static_cast<uint64_t>(revision));
    changes.clear();
  };
  for (const mvccpb::Event& event : response.events()) {
    const mvccpb::KeyValue& kv = event.kv();
    if (kv.mod_revision() != revision) {
      flush();  // one commit's changes together, each commit in order
      revision = kv.mod_revision();
    }
    std::optional<RecordName> name = layout.Parse(kv.key());
    if (!name.has_value()) {
      if (layout.IsMarker(kv.key()) && event.type() == mvccpb::Event_EventType_DELETE) {
        Log("keystore_marker_deleted", "error")
            .Add("store", records_.Describe())
            .Add("detail", "someone deleted the keystore's marker; serving what is loaded");
      }
      continue;
    }
    if (event.type() == mvccpb::Event_EventType_DELETE) {
      changes.emplace_back(*name, std::nullopt);
      continue;
    }
    auto record = records_.Decode(kv, name);
    if (!record.ok()) {
      // Only someone writing etcd by hand gets here: the record keeps its last good
      // value in this replica, and the logs say why.
      Log("keystore_record_refused", "error")
          .Add("store", records_.Describe())
          .Add("error", record.status().message());
      continue;
    }
    changes.emplace_back(*name, *std::move(record));
  }
  flush();
}

absl::Status EtcdWatch::WatchOnce(bool& created) {
  created = false;
  // Known (so cancellable by Stop and Restart) before the stream is opened: opening
  // it waits for a connection.
  auto context = std::make_unique<grpc::ClientContext>();
  bool from_now;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_.HasBeenNotified()) return absl::CancelledError("stopping");
    context_ = context.get();
    restart_ = false;  // this stream is the restart asked for
    from_now = std::exchange(resume_from_now_, false);
  }
  auto watch = client_.Watch(context.get());
  if (!watch.ok()) {
    absl::MutexLock lock(&mu_);
    context_ = nullptr;
    return watch.status();
  }
  // 0: from etcd's revision now; the feed holds what such a stream delivers until
  // the fresh read it was started for is in: until then there is a gap before it.
  const uint64_t from = feed_.BeginStream(from_now);
  const Layout& layout = records_.layout();
  etcdserverpb::WatchRequest request;
  etcdserverpb::WatchCreateRequest* create = request.mutable_create_request();
  create->set_key(layout.prefix());
  create->set_range_end(layout.prefix_end());
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
          absl::MutexLock lock(&mu_);
          resumed_at_ = std::max<int64_t>(1, response.header().revision());
        }
      }
      HandleEvents(response);
    }
  }
  grpc::Status finished = watch->stream->Finish();
  bool restarted;
  {
    absl::MutexLock lock(&mu_);
    context_ = nullptr;
    restarted = restart_;
  }
  // Moved on purpose, to an endpoint that answers: not this one's failure.
  if (!restarted && (!created || absl::IsUnavailable(ended))) {
    client_.EndpointFailed(watch->endpoint, watch->connection.get());
  }
  if (absl::IsUnavailable(ended) && !finished.ok()) {
    ended = absl::UnavailableError(absl::StrCat("etcd: ", finished.error_message()));
  }
  return ended;
}

void EtcdWatch::Loop() {
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
      ended = Reload("watch compacted");
      if (ended.ok()) continue;
    }
    if (created) {
      failures = 0;
      backoff = absl::Milliseconds(100);
    }
    // A stream that had worked is tried again at once (on the next endpoint: one
    // member going away is not an outage); after that, with backoff, unless the
    // heartbeat finds a member that answers first (Restart).
    if (++failures == 1) continue;
    {
      absl::MutexLock lock(&mu_);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return restart_ || stopping_.HasBeenNotified();
      };
      mu_.AwaitWithTimeout(absl::Condition(&woken), backoff);
    }
    backoff = std::min(backoff * 2, absl::Milliseconds(500));
  }
}

}  // namespace sealbox::server::etcd
