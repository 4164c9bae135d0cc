// Per-peer limit on failed authentication: after `max_failures` failures from one
// address within `window`, that address's calls are refused for `window` without
// their credentials being checked. Memory is bounded: at most `max_peers` addresses
// are tracked, the least recently active forgotten first.
//
// Successful calls do not reset an address's count: an attacker holding one valid
// token could otherwise interleave good calls to keep guessing others' tokens. The
// cost is that a client sharing an address (NAT) with a misbehaving one is refused
// with it until the window passes.
#ifndef SEALBOX_SERVER_AUTH_AUTH_LIMITER_H_
#define SEALBOX_SERVER_AUTH_AUTH_LIMITER_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sealbox::server {

struct AuthLimits {
  int max_failures = 30;  // per window and address; 0: no limit
  absl::Duration window = absl::Minutes(1);
  size_t max_peers = 10000;
};

class AuthFailureLimiter {
 public:
  explicit AuthFailureLimiter(AuthLimits limits) : limits_(limits) {}

  // OK, or RESOURCE_EXHAUSTED while `address` is limited.
  absl::Status Check(absl::string_view address, absl::Time now = absl::Now());

  // Counts one failure; true when this one made `address` limited (log it once).
  bool RecordFailure(absl::string_view address, absl::Time now = absl::Now());

  size_t tracked_peers() const;

  // False while no address has failed at all (the usual case): Check would pass
  // everyone, so a caller may skip working out the address.
  bool tracking() const { return tracked_.load(std::memory_order_relaxed) > 0; }

 private:
  struct Peer {
    absl::Time window_start;
    int failures = 0;
    absl::Time limited_until = absl::InfinitePast();
    std::list<std::string>::iterator recency;
  };

  const AuthLimits limits_;
  mutable absl::Mutex mutex_;
  std::map<std::string, Peer, std::less<>> peers_ ABSL_GUARDED_BY(mutex_);
  std::list<std::string> by_recency_ ABSL_GUARDED_BY(mutex_);  // oldest first
  // Lets Check skip the lock while no address has failed at all.
  std::atomic<size_t> tracked_{0};
};

// The address part of a gRPC peer string, without the port: "ipv4:10.0.0.7:5123" ->
// "10.0.0.7", "ipv6:[::1]:5123" -> "::1"; anything else (unix:...) as it is.
std::string PeerAddress(absl::string_view peer);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_AUTH_AUTH_LIMITER_H_
