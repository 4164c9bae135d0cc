#ifndef SEALBOX_SERVER_METRICS_COLLECTED_VALUE_H_
#define SEALBOX_SERVER_METRICS_COLLECTED_VALUE_H_

// For tests: the value of a collected family that has one unlabelled series.

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "prometheus/metric_family.h"

namespace sealbox::server {

// The value of `name`'s one unlabelled series, checking its type and that it has
// help; NaN, and a test failure, when it is missing or has other series.
inline double CollectedValue(const std::vector<prometheus::MetricFamily>& families,
                             const std::string& name, prometheus::MetricType type) {
  for (const prometheus::MetricFamily& family : families) {
    if (family.name != name) continue;
    EXPECT_EQ(family.type, type) << name;
    EXPECT_FALSE(family.help.empty()) << name;
    if (family.metric.size() != 1 || !family.metric[0].label.empty()) {
      ADD_FAILURE() << name << " is not one unlabelled series";
      return std::nan("");
    }
    return type == prometheus::MetricType::Counter ? family.metric[0].counter.value
                                                   : family.metric[0].gauge.value;
  }
  ADD_FAILURE() << name << " is not collected";
  return std::nan("");
}

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_METRICS_COLLECTED_VALUE_H_
