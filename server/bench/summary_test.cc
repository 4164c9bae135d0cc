#include "server/bench/summary.h"

#include "gtest/gtest.h"

namespace sealbox::server::bench {
namespace {

TEST(ServiceSummaryLineTest, GivesEveryFigureInItsPlace) {
  ServiceFigures figures;
  figures.unary_1k_seal = 0.904;
  figures.unary_64k_seal = 0.6;
  figures.stream_64k_seal = 0.706;
  figures.stream_1m_seal = 1.0;
  figures.unary_1k_open = 0.94;
  figures.rss_growth_mib = 36.45;
  EXPECT_EQ(ServiceSummaryLine(figures),
            "service: unary1k=0.90 unary64k=0.60 stream64k=0.71 stream1m=1.00 "
            "open1k=0.94 rss_growth_mib=36.5");
}

TEST(ServiceSummaryLineTest, WhatDidNotRunIsNotAvailable) {
  ServiceFigures figures;
  figures.unary_1k_seal = 0.9;
  figures.unary_1k_open = 0.95;
  EXPECT_EQ(ServiceSummaryLine(figures),
            "service: unary1k=0.90 unary64k=n/a stream64k=n/a stream1m=n/a "
            "open1k=0.95 rss_growth_mib=n/a");
}

}  // namespace
}  // namespace sealbox::server::bench
