#include "server/bench/report.h"

#include "gtest/gtest.h"

namespace sealbox::load {
namespace {

TEST(SummaryFiguresTest, NothingRunIsNothingMeasured) {
  const server::bench::ServiceFigures figures = SummaryFigures(RunFigures());
  EXPECT_FALSE(figures.unary_1k_seal);
  EXPECT_FALSE(figures.unary_64k_seal);
  EXPECT_FALSE(figures.stream_64k_seal);
  EXPECT_FALSE(figures.stream_1m_seal);
  EXPECT_FALSE(figures.unary_1k_open);
  EXPECT_FALSE(figures.rss_growth_mib);
}

TEST(SummaryFiguresTest, TakesUnaryMediansAndStreamRatiosAtTheirSizes) {
  RunFigures run;
  run.unary.seal[1024] = {0.9, 0.5, 0.7};
  run.unary.seal[65536] = {0.6, 0.8};
  run.unary.open[1024] = {0.95};
  run.streams.seal_ratios[65536] = 0.75;
  run.streams.seal_ratios[1 << 20] = 0.85;
  run.streams.worst_growth_kib = 3 << 10;
  const server::bench::ServiceFigures figures = SummaryFigures(run);
  EXPECT_DOUBLE_EQ(*figures.unary_1k_seal, 0.7);
  EXPECT_DOUBLE_EQ(*figures.unary_64k_seal, 0.7);
  EXPECT_DOUBLE_EQ(*figures.unary_1k_open, 0.95);
  EXPECT_DOUBLE_EQ(*figures.stream_64k_seal, 0.75);
  EXPECT_DOUBLE_EQ(*figures.stream_1m_seal, 0.85);
  EXPECT_FALSE(figures.rss_growth_mib);  // no --server_pid

  run.server_pid = 1;
  EXPECT_DOUBLE_EQ(*SummaryFigures(run).rss_growth_mib, 3.0);
}

}  // namespace
}  // namespace sealbox::load
