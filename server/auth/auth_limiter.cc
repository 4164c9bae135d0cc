#include "server/auth/auth_limiter.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace sealbox::server {

std::string PeerAddress(absl::string_view peer) {
  if (absl::ConsumePrefix(&peer, "ipv4:")) {
    return std::string(peer.substr(0, peer.rfind(':')));
  }
  if (absl::ConsumePrefix(&peer, "ipv6:")) {
    if (absl::ConsumePrefix(&peer, "[")) return std::string(peer.substr(0, peer.find(']')));
    return std::string(peer.substr(0, peer.rfind(':')));
  }
  return std::string(peer);
}

absl::Status AuthFailureLimiter::Check(absl::string_view address, absl::Time now) {
  if (limits_.max_failures <= 0 || tracked_.load(std::memory_order_relaxed) == 0) {
    return absl::OkStatus();
  }
  absl::MutexLock lock(&mutex_);
  auto it = peers_.find(address);
  if (it == peers_.end() || now >= it->second.limited_until) return absl::OkStatus();
  const int64_t seconds =
      absl::ToInt64Seconds(absl::Ceil(it->second.limited_until - now, absl::Seconds(1)));
  return absl::ResourceExhaustedError(absl::StrCat(
      "too many failed authentication attempts from this address; retry in ", seconds, " s"));
}

bool AuthFailureLimiter::RecordFailure(absl::string_view address, absl::Time now) {
  if (limits_.max_failures <= 0) return false;
  absl::MutexLock lock(&mutex_);
  auto it = peers_.find(address);
  if (it == peers_.end()) {
    if (peers_.size() >= limits_.max_peers) {
      peers_.erase(by_recency_.front());
      by_recency_.pop_front();
    }
    by_recency_.emplace_back(address);
    Peer fresh;
    fresh.window_start = now;
    it = peers_.emplace(std::string(address), fresh).first;
    it->second.recency = std::prev(by_recency_.end());
  } else {
    by_recency_.splice(by_recency_.end(), by_recency_, it->second.recency);
  }
  tracked_.store(peers_.size(), std::memory_order_relaxed);
  Peer& peer = it->second;
  if (now < peer.limited_until) return false;  // already limited (a call in flight)
  if (now - peer.window_start >= limits_.window) {
    peer.window_start = now;
    peer.failures = 0;
  }
  if (++peer.failures < limits_.max_failures) return false;
  // Limited for a window; afterwards a fresh budget.
  peer.limited_until = now + limits_.window;
  peer.window_start = peer.limited_until;
  peer.failures = 0;
  return true;
}

size_t AuthFailureLimiter::tracked_peers() const {
  absl::MutexLock lock(&mutex_);
  return peers_.size();
}

}  // namespace sealbox::server
