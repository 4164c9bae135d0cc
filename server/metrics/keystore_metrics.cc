#include "server/metrics/keystore_metrics.h"

#include <utility>

#include "prometheus/metric_type.h"
#include "server/metrics/single_value.h"

namespace sealbox::server {

void KeystoreMetrics::SetReader(std::function<KeystoreHealth()> read) {
  absl::MutexLock lock(&mu_);
  read_ = std::move(read);
}

std::vector<prometheus::MetricFamily> KeystoreMetrics::Collect() const {
  using prometheus::MetricType;
  auto seconds = [](absl::Duration d) { return absl::ToDoubleSeconds(d); };
  KeystoreHealth k;
  {
    // Held while reading, so that a reader set to null is not called afterwards.
    absl::MutexLock lock(&mu_);
    if (!read_) return {};
    k = read_();
  }
  return {
      SingleValue("sealbox_keystore_loaded", "1 once the keystore has loaded.", MetricType::Gauge,
                  k.loaded ? 1 : 0),
      SingleValue("sealbox_keystore_reachable",
                  "1 while the keystore's store (etcd, or the file) answers.", MetricType::Gauge,
                  k.reachable ? 1 : 0),
      SingleValue("sealbox_keystore_staleness_seconds",
                  "Seconds since the keystore was last proven current with its store "
                  "(+Inf before loading). Past sealbox_keystore_max_staleness_seconds "
                  "the replica refuses every call.",
                  MetricType::Gauge, seconds(k.staleness)),
      SingleValue("sealbox_keystore_max_staleness_seconds",
                  "--max-staleness in seconds (+Inf: unbounded).", MetricType::Gauge,
                  seconds(k.max_staleness)),
      SingleValue("sealbox_keystore_revision",
                  "The etcd revision (or file generation) the keystore has applied.",
                  MetricType::Gauge, static_cast<double>(k.revision)),
      SingleValue("sealbox_keystore_reloads_total",
                  "Whole reloads of the keystore after loading: a compacted etcd watch, "
                  "a file another process wrote.",
                  MetricType::Counter, static_cast<double>(k.reloads)),
      SingleValue("sealbox_keystore_catch_ups_total",
                  "Calls that waited for the store to deliver what they named (a token "
                  "or key not known here yet).",
                  MetricType::Counter, static_cast<double>(k.catch_ups)),
      SingleValue("sealbox_keystore_catch_up_seconds_total", "Seconds those calls waited, in all.",
                  MetricType::Counter, k.catch_up_seconds),
      SingleValue("sealbox_keystore_stale_refusals_total",
                  "Calls (either plane) and stream messages refused because the "
                  "keystore was staler than --max-staleness.",
                  MetricType::Counter, static_cast<double>(k.stale_refusals)),
  };
}

}  // namespace sealbox::server
