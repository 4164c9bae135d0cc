// prometheus-cpp keeps a series' labels in a map, so it writes them sorted by name.
// sealbox has always written them in its own order (method before code, tenant
// before key), and dashboards and tests match that text; this puts it back.
#ifndef SEALBOX_SERVER_METRICS_LABEL_ORDER_H_
#define SEALBOX_SERVER_METRICS_LABEL_ORDER_H_

#include <string>
#include <vector>

#include "prometheus/metric_family.h"

namespace sealbox::server {

// Reorders the labels of every series of family `name` to follow `order`; labels
// not named keep their relative order after the named ones.
void OrderLabels(std::vector<prometheus::MetricFamily>& families, const std::string& name,
                 const std::vector<std::string>& order);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_METRICS_LABEL_ORDER_H_
