#include "server/keystore/etcd/listener_feed.h"

#include <utility>

namespace sealbox::server::etcd {

void ListenerFeed::Start(StorageListener* listener, uint64_t revision) {
  absl::MutexLock lock(&mu_);
  listener_ = listener;
  delivered_ = revision;
}

uint64_t ListenerFeed::BeginStream(bool from_now) {
  absl::MutexLock lock(&mu_);
  holding_ = from_now;
  held_.clear();
  return from_now ? 0 : delivered_ + 1;
}

void ListenerFeed::Apply(std::vector<RecordChange> changes, uint64_t revision) {
  absl::MutexLock lock(&mu_);
  if (revision <= delivered_ || listener_ == nullptr) return;
  if (holding_) {
    held_.emplace_back(std::move(changes), revision);
    return;
  }
  listener_->Apply(changes, revision);
  delivered_ = revision;
}

bool ListenerFeed::Reload(const KeystoreContents& contents) {
  absl::MutexLock lock(&mu_);
  if (contents.generation <= delivered_ || listener_ == nullptr) return false;
  listener_->Reload(contents);
  delivered_ = contents.generation;
  return true;
}

std::optional<uint64_t> ListenerFeed::Relisted(const KeystoreContents& contents) {
  absl::MutexLock lock(&mu_);
  if (listener_ == nullptr) return std::nullopt;
  // (A whole load in between, by Refresh, may already be newer.)
  if (contents.generation > delivered_) {
    listener_->Reload(contents);
    delivered_ = contents.generation;
  }
  if (!holding_) return std::nullopt;
  for (auto& [changes, revision] : held_) {
    if (revision <= delivered_) continue;
    listener_->Apply(changes, revision);
    delivered_ = revision;
  }
  held_.clear();
  holding_ = false;
  return delivered_;
}

bool ListenerFeed::WaitDelivered(uint64_t revision, absl::Duration patience) {
  absl::MutexLock lock(&mu_);
  auto reached = [this, revision]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return delivered_ >= revision; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), patience);
}

void ListenerFeed::Reachable(bool reachable, absl::string_view why) {
  absl::MutexLock lock(&mu_);
  if (listener_ != nullptr) listener_->Reachable(reachable, why);
}

void ListenerFeed::CurrentAsOf(std::chrono::steady_clock::time_point as_of) {
  absl::MutexLock lock(&mu_);
  if (listener_ != nullptr) listener_->CurrentAsOf(as_of);
}

}  // namespace sealbox::server::etcd
