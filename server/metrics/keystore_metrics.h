// The sealbox_keystore_* series: what the keystore says of its store (loaded,
// reachable, how stale, at which revision, reloads, catch-ups, refusals for
// staleness), read at scrape time through a function the server gives, so the
// metrics do not depend on the keystore.
#ifndef SEALBOX_SERVER_METRICS_KEYSTORE_METRICS_H_
#define SEALBOX_SERVER_METRICS_KEYSTORE_METRICS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace sealbox::server {

struct KeystoreReading {
  bool loaded = false;
  bool reachable = false;
  double staleness_seconds = 0;      // +Inf before the first proof
  double max_staleness_seconds = 0;  // +Inf: unbounded
  double revision = 0;
  double reloads = 0;
  double catch_ups = 0;
  double catch_up_seconds = 0;
  double stale_refusals = 0;
};

class KeystoreMetrics : public prometheus::Collectable {
 public:
  // Until a reader is set, the scrape has no keystore series. Setting null waits for
  // a scrape that is reading.
  void SetReader(std::function<KeystoreReading()> read);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  mutable absl::Mutex mu_;
  std::function<KeystoreReading()> read_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_METRICS_KEYSTORE_METRICS_H_
