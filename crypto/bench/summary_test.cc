#include "crypto/bench/summary.h"

#include "gtest/gtest.h"

namespace sealbox::crypto::bench {
namespace {

TEST(CryptoSummaryLineTest, NamesTheLowestRatioAndWhereItWas) {
  const std::vector<MeasuredRatio> ratios = {
      {"Seal", 128, 16, 1.40}, {"Open", 128, 16384, 0.891}, {"Seal", 256, 1048576, 0.95}};
  EXPECT_EQ(CryptoSummaryLine("x86_vaes_avx512", "openssl-3.5", ratios, 3),
            "crypto: x86_vaes_avx512 vs openssl-3.5: min=0.89 at Open/128/16384");
}

TEST(CryptoSummaryLineTest, TheFirstOfEqualRatiosWins) {
  const std::vector<MeasuredRatio> ratios = {{"Seal", 256, 64, 0.9}, {"Open", 128, 64, 0.9}};
  EXPECT_EQ(CryptoSummaryLine("portable", "openssl-3.0", ratios, 2),
            "crypto: portable vs openssl-3.0: min=0.90 at Seal/256/64");
}

TEST(CryptoSummaryLineTest, ANarrowedRunSaysHowManyRatiosRan) {
  EXPECT_EQ(CryptoSummaryLine("x86_aesni", "openssl-3.5", {{"Seal", 128, 1024, 1.5}}, 40),
            "crypto: x86_aesni vs openssl-3.5: min=1.50 at Seal/128/1024 "
            "(1 of 40 ratios ran)");
}

TEST(CryptoSummaryLineTest, NoRatiosGiveNotAvailable) {
  EXPECT_EQ(CryptoSummaryLine("x86_aesni", "openssl-3.5", {}, 40),
            "crypto: x86_aesni vs openssl-3.5: min=n/a (no row of both ran)");
}

}  // namespace
}  // namespace sealbox::crypto::bench
