// A metric family of one series without labels, for collectors that read their
// values at scrape time (process_metrics.h, keystore_metrics.h).
#ifndef SEALBOX_SERVER_METRICS_SINGLE_VALUE_H_
#define SEALBOX_SERVER_METRICS_SINGLE_VALUE_H_

#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"

namespace sealbox::server {

inline prometheus::MetricFamily SingleValue(const char* name, const char* help,
                                            prometheus::MetricType type, double value) {
  prometheus::MetricFamily family{name, help, type, {prometheus::ClientMetric{}}};
  if (type == prometheus::MetricType::Counter) {
    family.metric[0].counter.value = value;
  } else {
    family.metric[0].gauge.value = value;
  }
  return family;
}

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_METRICS_SINGLE_VALUE_H_
