#include "server/metrics/label_order.h"

#include <algorithm>

namespace sealbox::server {

void OrderLabels(std::vector<prometheus::MetricFamily>& families, const std::string& name,
                 const std::vector<std::string>& order) {
  auto rank = [&order](const prometheus::ClientMetric::Label& label) {
    return std::find(order.begin(), order.end(), label.name) - order.begin();
  };
  for (prometheus::MetricFamily& family : families) {
    if (family.name != name) continue;
    for (prometheus::ClientMetric& series : family.metric) {
      std::stable_sort(series.label.begin(), series.label.end(),
                       [&rank](const auto& a, const auto& b) { return rank(a) < rank(b); });
    }
  }
}

}  // namespace sealbox::server
