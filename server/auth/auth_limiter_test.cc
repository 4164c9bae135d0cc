#include "server/auth/auth_limiter.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

TEST(PeerAddress, DropsThePort) {
  EXPECT_EQ(PeerAddress("ipv4:10.0.0.7:5123"), "10.0.0.7");
  EXPECT_EQ(PeerAddress("ipv6:[::1]:5123"), "::1");
  EXPECT_EQ(PeerAddress("ipv6:[2001:db8::2]:80"), "2001:db8::2");
  EXPECT_EQ(PeerAddress("unix:/run/sealbox.sock"), "unix:/run/sealbox.sock");
}

TEST(AuthFailureLimiter, LimitsAnAddressForAWindow) {
  AuthFailureLimiter limiter({/*max_failures=*/3, absl::Minutes(1), 100});
  EXPECT_FALSE(limiter.RecordFailure("a", kStart));
  EXPECT_FALSE(limiter.RecordFailure("a", kStart + absl::Seconds(1)));
  EXPECT_TRUE(limiter.Check("a", kStart + absl::Seconds(2)).ok());
  EXPECT_TRUE(limiter.RecordFailure("a", kStart + absl::Seconds(2)));  // the third
  absl::Status limited = limiter.Check("a", kStart + absl::Seconds(3));
  EXPECT_TRUE(absl::IsResourceExhausted(limited)) << limited;
  EXPECT_NE(limited.message().find("retry in 59 s"), absl::string_view::npos) << limited;
  // Other addresses are not affected.
  EXPECT_TRUE(limiter.Check("b", kStart + absl::Seconds(3)).ok());
  // Failures while limited neither extend the limit nor log again.
  EXPECT_FALSE(limiter.RecordFailure("a", kStart + absl::Seconds(30)));
  EXPECT_FALSE(limiter.Check("a", kStart + absl::Seconds(61)).ok());
  // After the window, a fresh budget.
  EXPECT_TRUE(limiter.Check("a", kStart + absl::Seconds(62)).ok());
  EXPECT_FALSE(limiter.RecordFailure("a", kStart + absl::Seconds(63)));
  EXPECT_TRUE(limiter.Check("a", kStart + absl::Seconds(63)).ok());
}

TEST(AuthFailureLimiter, FailuresSpreadOverWindowsDoNotAddUp) {
  AuthFailureLimiter limiter({2, absl::Minutes(1), 100});
  EXPECT_FALSE(limiter.RecordFailure("a", kStart));
  EXPECT_FALSE(limiter.RecordFailure("a", kStart + absl::Seconds(61)));
  EXPECT_TRUE(limiter.Check("a", kStart + absl::Seconds(62)).ok());
}

TEST(AuthFailureLimiter, ZeroDisables) {
  AuthFailureLimiter limiter({0, absl::Minutes(1), 100});
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(limiter.RecordFailure("a", kStart));
  EXPECT_TRUE(limiter.Check("a", kStart).ok());
  EXPECT_EQ(limiter.tracked_peers(), 0u);
}

TEST(AuthFailureLimiter, TracksABoundedNumberOfAddresses) {
  AuthFailureLimiter limiter({2, absl::Minutes(1), 10});
  EXPECT_FALSE(limiter.RecordFailure("victim", kStart));
  EXPECT_TRUE(limiter.RecordFailure("victim", kStart));
  for (int i = 0; i < 1000; ++i) limiter.RecordFailure(absl::StrCat("10.0.", i), kStart);
  EXPECT_EQ(limiter.tracked_peers(), 10u);
  // The least recently active address was forgotten first.
  EXPECT_TRUE(limiter.Check("victim", kStart).ok());
  // Recent ones are still counted.
  EXPECT_TRUE(limiter.RecordFailure("10.0.999", kStart));
  EXPECT_FALSE(limiter.Check("10.0.999", kStart).ok());
}

}  // namespace
}  // namespace sealbox::server
