// Prometheus metrics: a fixed set of counters and histograms, updated lock-free on
// the hot path, rendered in the text exposition format on request.
#ifndef SEALBOX_SERVER_METRICS_METRICS_H_
#define SEALBOX_SERVER_METRICS_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sealbox::server {

// Latency histogram with fixed buckets (seconds), lock-free to observe.
class Histogram {
 public:
  static constexpr std::array<double, 12> kBounds = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
      0.01,   0.025,   0.05,   0.1,   0.5,    2.5};

  void Observe(double seconds);
  // Appends the _bucket, _sum and _count lines for `name{labels}`.
  void Render(absl::string_view name, absl::string_view labels, std::string& out) const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_nanos_{0};
};

class Metrics {
 public:
  // One finished RPC: its method ("Seal"), status code and duration.
  void RecordRpc(absl::string_view method, absl::StatusCode code, absl::Duration took);

  // The same from the call's final status, also counting authentication and
  // decryption failures.
  void RecordOutcome(absl::string_view method, const absl::Status& status,
                     absl::Time started);

  void AddBytesSealed(uint64_t n) { bytes_sealed_.fetch_add(n, std::memory_order_relaxed); }
  void AddBytesOpened(uint64_t n) { bytes_opened_.fetch_add(n, std::memory_order_relaxed); }
  // Where a call was refused and why: plane "data" or "admin"; reason "missing" (no
  // credentials), "invalid" (unknown, revoked or unmapped) or "wrong_plane" (the
  // admin token on the data plane, a tenant token on the admin plane).
  void CountAuthFailure(absl::string_view plane, absl::string_view reason);
  // A call refused unchecked because its address failed too often (auth limiter).
  void CountAuthLimited(absl::string_view plane);
  void CountDecryptionFailure() {
    decryption_failures_.fetch_add(1, std::memory_order_relaxed);
  }
  // A failed Open, Rewrap or OpenStream of this tenant's key. Labelled series are
  // kept for the first kMaxKeySeries keys that fail; later keys share one
  // tenant="_other",key="_other" series, so cardinality stays bounded.
  static constexpr size_t kMaxKeySeries = 1000;
  void CountKeyDecryptionFailure(absl::string_view tenant, absl::string_view key);
  // An Open/Rewrap/OpenStream refused by --max-decryption-failures-per-key.
  void CountDecryptionRefused() {
    decryption_refused_.fetch_add(1, std::memory_order_relaxed);
  }
  // A stream ended by --stream-idle-seconds.
  void CountStreamIdleTimeout() {
    stream_idle_timeouts_.fetch_add(1, std::memory_order_relaxed);
  }
  void StreamStarted() { active_streams_.fetch_add(1, std::memory_order_relaxed); }
  void StreamEnded() { active_streams_.fetch_sub(1, std::memory_order_relaxed); }

  // The Prometheus text format (version 0.0.4).
  std::string Render() const;

 private:
  struct PerMethod {
    Histogram latency;
    // Indexed by absl::StatusCode (0 OK .. 16 UNAUTHENTICATED).
    std::array<std::atomic<uint64_t>, 17> by_code{};
  };
  PerMethod& ForMethod(absl::string_view method);

  mutable absl::Mutex mutex_;
  std::map<std::string, std::unique_ptr<PerMethod>, std::less<>> methods_;
  std::atomic<uint64_t> bytes_sealed_{0};
  std::atomic<uint64_t> bytes_opened_{0};
  static constexpr int kPlanes = 2;   // data, admin
  static constexpr int kReasons = 3;  // missing, invalid, wrong_plane
  std::array<std::atomic<uint64_t>, kPlanes * kReasons> auth_failures_{};
  std::array<std::atomic<uint64_t>, kPlanes> auth_limited_{};
  std::atomic<uint64_t> decryption_failures_{0};
  std::atomic<uint64_t> decryption_refused_{0};
  std::atomic<uint64_t> stream_idle_timeouts_{0};
  mutable absl::Mutex key_failures_mutex_;
  std::map<std::pair<std::string, std::string>, uint64_t> key_failures_
      ABSL_GUARDED_BY(key_failures_mutex_);
  std::atomic<int> active_streams_{0};
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_METRICS_METRICS_H_
