// The standard process_* series (as Prometheus's Go and Python clients name them),
// which prometheus-cpp 1.0 does not provide: CPU time, memory, file descriptors and
// start time, read from /proc/self at scrape time. Linux only; a value that cannot
// be read is left out of the scrape.
#ifndef SEALBOX_SERVER_METRICS_PROCESS_METRICS_H_
#define SEALBOX_SERVER_METRICS_PROCESS_METRICS_H_

#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace sealbox::server {

class ProcessMetrics : public prometheus::Collectable {
 public:
  ProcessMetrics();
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  double start_time_seconds_ = 0;  // fixed for the process's life: read once
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_METRICS_PROCESS_METRICS_H_
