// The sealbox_keystore_* series: what the keystore says of its store (loaded,
// reachable, how stale, at which revision, reloads, catch-ups, refusals for
// staleness), read at scrape time through a function the server gives.
#ifndef SEALBOX_SERVER_METRICS_KEYSTORE_METRICS_H_
#define SEALBOX_SERVER_METRICS_KEYSTORE_METRICS_H_

#include <functional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "server/keystore/health.h"

namespace sealbox::server {

class KeystoreMetrics : public prometheus::Collectable {
 public:
  // Until a reader is set, the scrape has no keystore series. Setting null waits for
  // a scrape that is reading.
  void SetReader(std::function<KeystoreHealth()> read);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  mutable absl::Mutex mu_;
  std::function<KeystoreHealth()> read_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_METRICS_KEYSTORE_METRICS_H_
