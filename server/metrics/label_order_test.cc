#include "server/metrics/label_order.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/registry.h"

namespace sealbox::server {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;

// A series' label names, in the order they would be written.
std::vector<std::string> Names(const ClientMetric& series) {
  std::vector<std::string> names;
  for (const ClientMetric::Label& label : series.label) names.push_back(label.name);
  return names;
}

ClientMetric Series(std::vector<std::string> names) {
  ClientMetric series;
  for (std::string& name : names) series.label.push_back({name, "v_" + name});
  return series;
}

TEST(OrderLabels, PutsTheNamedLabelsFirstInTheGivenOrder) {
  // What prometheus-cpp collects: labels sorted by name.
  prometheus::Registry registry;
  auto& rpcs = prometheus::BuildCounter().Name("sealbox_rpcs_total").Register(registry);
  rpcs.Add({{"method", "Seal"}, {"code", "OK"}});
  rpcs.Add({{"method", "Open"}, {"code", "NOT_FOUND"}});
  std::vector<MetricFamily> families = registry.Collect();
  ASSERT_EQ(families.size(), 1u);
  ASSERT_EQ(families[0].metric.size(), 2u);
  EXPECT_EQ(Names(families[0].metric[0]), (std::vector<std::string>{"code", "method"}));

  OrderLabels(families, "sealbox_rpcs_total", {"method", "code"});
  std::set<std::pair<std::string, std::string>> values;  // the values travel with their names
  for (const ClientMetric& series : families[0].metric) {
    ASSERT_EQ(Names(series), (std::vector<std::string>{"method", "code"}));
    values.emplace(series.label[0].value, series.label[1].value);
  }
  EXPECT_EQ(values,
            (std::set<std::pair<std::string, std::string>>{{"Seal", "OK"}, {"Open", "NOT_FOUND"}}));
}

TEST(OrderLabels, LeavesOtherFamiliesAlone) {
  std::vector<MetricFamily> families = {
      {"sealbox_key_decryption_failures_total",
       "",
       prometheus::MetricType::Counter,
       {Series({"key", "tenant"})}},
      {"sealbox_other_total", "", prometheus::MetricType::Counter, {Series({"key", "tenant"})}},
  };
  OrderLabels(families, "sealbox_key_decryption_failures_total", {"tenant", "key"});
  EXPECT_EQ(Names(families[0].metric[0]), (std::vector<std::string>{"tenant", "key"}));
  EXPECT_EQ(families[0].metric[0].label[0].value, "v_tenant");
  EXPECT_EQ(Names(families[1].metric[0]), (std::vector<std::string>{"key", "tenant"}));
}

TEST(OrderLabels, UnnamedLabelsFollowInTheirOwnOrder) {
  std::vector<MetricFamily> families = {
      {"f",
       "",
       prometheus::MetricType::Counter,
       {Series({"z", "b", "method", "a", "code"}), Series({"y", "code"})}},
  };
  OrderLabels(families, "f", {"method", "code"});
  EXPECT_EQ(Names(families[0].metric[0]),
            (std::vector<std::string>{"method", "code", "z", "b", "a"}));
  // A named label the series lacks is skipped.
  EXPECT_EQ(Names(families[0].metric[1]), (std::vector<std::string>{"code", "y"}));
}

TEST(OrderLabels, NoFamilyOfThatNameIsNoChange) {
  std::vector<MetricFamily> families = {
      {"f", "", prometheus::MetricType::Counter, {Series({"b", "a"})}},
  };
  OrderLabels(families, "g", {"a", "b"});
  EXPECT_EQ(Names(families[0].metric[0]), (std::vector<std::string>{"b", "a"}));
  std::vector<MetricFamily> none;
  OrderLabels(none, "f", {"a"});
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace sealbox::server
