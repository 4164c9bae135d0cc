#include "server/keystore/freshness.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace sealbox::server {

Freshness::Freshness(absl::Duration max_staleness, std::string store)
    : max_staleness_(max_staleness),
      bound_ns_(max_staleness == absl::InfiniteDuration()
                    ? kUnbounded
                    : absl::ToInt64Nanoseconds(max_staleness)),
      store_(std::move(store)) {}

void Freshness::Confirm(SteadyClock::time_point as_of) {
  const int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(as_of.time_since_epoch()).count();
  int64_t seen = confirmed_ns_.load(std::memory_order_relaxed);
  while (seen < ns && !confirmed_ns_.compare_exchange_weak(seen, ns, std::memory_order_acq_rel)) {
  }
}

absl::Duration Freshness::Staleness() const {
  const int64_t confirmed = confirmed_ns_.load(std::memory_order_acquire);
  if (confirmed == kNever) return absl::InfiniteDuration();
  return absl::Nanoseconds(std::max<int64_t>(0, NowNs() - confirmed));
}

absl::Time Freshness::ConfirmedAt() const {
  const absl::Duration staleness = Staleness();
  if (staleness == absl::InfiniteDuration()) return absl::InfinitePast();
  return absl::Now() - staleness;
}

absl::Status Freshness::Stale(const std::string& why) const {
  const absl::Duration staleness = Staleness();
  std::string since = "never";
  if (staleness != absl::InfiniteDuration()) {
    since = absl::StrCat(
        absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", ConfirmedAt(), absl::UTCTimeZone()), " (",
        absl::FormatDuration(absl::Trunc(staleness, absl::Milliseconds(100))), " ago)");
  }
  return absl::UnavailableError(absl::StrCat(
      "this replica's keystore is stale: last confirmed current with the ", store_, " at ", since,
      ", longer ago than --max-staleness=", FormatMaxStaleness(max_staleness_),
      " allows, so anything revoked since may not be known here; calls are refused "
      "until it reaches its store again",
      why.empty() ? "" : absl::StrCat(" (", why, ")")));
}

std::string FormatMaxStaleness(absl::Duration bound) {
  if (bound == absl::InfiniteDuration()) return "unbounded";
  return absl::FormatDuration(bound);
}

}  // namespace sealbox::server
