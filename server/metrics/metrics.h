// Prometheus metrics: sealbox's counters, histograms and gauges, kept in a
// prometheus-cpp registry. The hot path touches only cached metric references
// (atomics); families and label sets are looked up once, on a series' first use.
#ifndef SEALBOX_SERVER_METRICS_METRICS_H_
#define SEALBOX_SERVER_METRICS_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/metrics/keystore_metrics.h"

namespace sealbox::server {

class Metrics {
 public:
  // Latency buckets of sealbox_rpc_duration_seconds (seconds).
  static constexpr std::array<double, 12> kLatencyBounds = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5};

  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // One finished RPC: its method ("Seal"), status code and duration.
  void RecordRpc(absl::string_view method, absl::StatusCode code, absl::Duration took);

  // The same from the call's final status, also counting authentication and
  // decryption failures.
  void RecordOutcome(absl::string_view method, const absl::Status& status, absl::Time started);

  void AddBytesSealed(uint64_t n) { bytes_sealed_->Increment(static_cast<double>(n)); }
  void AddBytesOpened(uint64_t n) { bytes_opened_->Increment(static_cast<double>(n)); }
  // Where a call was refused and why: plane "data" or "admin"; reason "missing" (no
  // credentials), "invalid" (unknown, revoked or unmapped), "wrong_plane" (the
  // admin token on the data plane, a tenant token on the admin plane) or "expired".
  void CountAuthFailure(absl::string_view plane, absl::string_view reason);
  // A call refused unchecked because its address failed too often (auth limiter).
  void CountAuthLimited(absl::string_view plane);
  void CountDecryptionFailure() { decryption_failures_->Increment(); }
  // A failed Open, Rewrap or OpenStream of this tenant's key. Labelled series are
  // kept for the first kMaxKeySeries keys that fail; later keys share one
  // tenant="_other",key="_other" series, so cardinality stays bounded.
  static constexpr size_t kMaxKeySeries = 1000;
  void CountKeyDecryptionFailure(absl::string_view tenant, absl::string_view key);
  // An Open/Rewrap/OpenStream refused by --max-decryption-failures-per-key.
  void CountDecryptionRefused() { decryption_refused_->Increment(); }
  // A stream ended by --stream-idle-seconds.
  void CountStreamIdleTimeout() { stream_idle_timeouts_->Increment(); }
  // Audit lines (server/audit/audit_log.h): written, and dropped rather than let a
  // request wait, because the writer fell behind ("queue_full") or the write failed
  // ("write_failed": a full disk, say).
  void CountAuditLinesWritten(uint64_t n) { audit_written_->Increment(static_cast<double>(n)); }
  void CountAuditLinesDropped(absl::string_view reason, uint64_t n);
  // Where the sealbox_keystore_* series are read from at each scrape.
  void ReadKeystoreWith(std::function<KeystoreHealth()> read) {
    keystore_series_->SetReader(std::move(read));
  }
  // The root key (server/custody): whether it can be used now (sealbox_root_key_up,
  // a series only once there is a root key), and custody events by name
  // ("kek_unsealed", "kek_created", "root_key_created", "root_key_lost",
  // "root_key_back").
  void SetRootKeyUp(bool up);
  void CountCustodyEvent(absl::string_view event);
  void StreamStarted() { active_streams_->Increment(); }
  void StreamEnded() { active_streams_->Decrement(); }

  // What a scrape shows, for an exposer to serve: the sealbox_* series, then the
  // process_* series.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables() const;

  // The same in the Prometheus text format (version 0.0.4).
  std::string Render() const;

 private:
  class SealboxSeries;

  // Per method: its latency histogram, and its rpcs_total counter per status code,
  // each added to the family on first use (a code never seen has no series).
  struct PerMethod {
    prometheus::Histogram* latency = nullptr;
    // Indexed by absl::StatusCode (0 OK .. 16 UNAUTHENTICATED).
    std::array<std::atomic<prometheus::Counter*>, 17> by_code{};
  };
  PerMethod& ForMethod(absl::string_view method);

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* rpcs_;
  prometheus::Family<prometheus::Histogram>* rpc_duration_;
  prometheus::Counter* bytes_sealed_;
  prometheus::Counter* bytes_opened_;
  static constexpr int kPlanes = 2;   // data, admin
  static constexpr int kReasons = 4;  // missing, invalid, wrong_plane, expired
  std::array<prometheus::Counter*, kPlanes * kReasons> auth_failures_;
  std::array<prometheus::Counter*, kPlanes> auth_limited_;
  prometheus::Counter* decryption_failures_;
  prometheus::Family<prometheus::Counter>* key_failures_;
  prometheus::Counter* decryption_refused_;
  prometheus::Counter* stream_idle_timeouts_;
  prometheus::Counter* audit_written_;
  std::array<prometheus::Counter*, 2> audit_dropped_;  // queue_full, write_failed
  std::array<prometheus::Gauge*, 2> secret_memory_;    // locked="true", "false"
  prometheus::Gauge* active_streams_;
  prometheus::Family<prometheus::Gauge>* root_key_up_;
  prometheus::Family<prometheus::Counter>* custody_events_;

  mutable absl::Mutex mutex_;
  std::map<std::string, std::unique_ptr<PerMethod>, std::less<>> methods_ ABSL_GUARDED_BY(mutex_);
  absl::Mutex key_failures_mutex_;
  std::map<std::pair<std::string, std::string>, prometheus::Counter*> key_series_
      ABSL_GUARDED_BY(key_failures_mutex_);

  std::shared_ptr<prometheus::Collectable> sealbox_series_;
  std::shared_ptr<KeystoreMetrics> keystore_series_;
  std::shared_ptr<prometheus::Collectable> process_series_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_METRICS_METRICS_H_
