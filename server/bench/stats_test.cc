#include "server/bench/stats.h"

#include "gtest/gtest.h"

namespace sealbox::server::bench {
namespace {

TEST(PercentileTest, NoValuesGiveZero) {
  EXPECT_EQ(Percentile({}, 0.5), 0);
  EXPECT_EQ(Median({}), 0);
}

TEST(PercentileTest, MedianOfAnOddCountIsTheMiddleValue) { EXPECT_EQ(Median({9, 1, 5}), 5); }

TEST(PercentileTest, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
}

TEST(PercentileTest, InterpolatesBetweenRanks) {
  std::vector<double> values;
  for (int i = 0; i <= 100; ++i) values.push_back(100 - i);  // 0..100, unsorted
  EXPECT_EQ(Percentile(values, 0.0), 0);
  EXPECT_EQ(Percentile(values, 0.99), 99);
  EXPECT_EQ(Percentile(values, 1.0), 100);
  EXPECT_DOUBLE_EQ(Percentile({10, 20}, 0.25), 12.5);
}

TEST(PercentileTest, FractionsOutsideZeroToOneAreClamped) {
  EXPECT_EQ(Percentile({1, 2, 3}, -1), 1);
  EXPECT_EQ(Percentile({1, 2, 3}, 7), 3);
}

}  // namespace
}  // namespace sealbox::server::bench
