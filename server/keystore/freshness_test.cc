#include "server/keystore/freshness.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(FreshnessTest, StaleBeforeAnyProof) {
  Freshness freshness(absl::Seconds(30), "etcd keystore /sealbox/ at 10.0.0.1:2379");
  absl::Status status = freshness.Check();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("at never"));
  EXPECT_EQ(freshness.Staleness(), absl::InfiniteDuration());
  EXPECT_EQ(freshness.ConfirmedAt(), absl::InfinitePast());
}

TEST(FreshnessTest, CurrentWithinTheBoundStaleAfterAndCurrentAgainWithANewProof) {
  Freshness freshness(absl::Seconds(30), "keystore /data/keystore.sbx");
  freshness.Confirm(SteadyClock::now());
  EXPECT_TRUE(freshness.Check().ok());
  EXPECT_LT(freshness.Staleness(), absl::Seconds(1));

  // A proof that began 31 s ago: too old.
  Freshness old(absl::Seconds(30), "keystore /data/keystore.sbx");
  old.Confirm(SteadyClock::now() - std::chrono::seconds(31));
  absl::Status status = old.Check("etcd at 10.0.0.1:2379: connection refused");
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_THAT(status.message(), AllOf(HasSubstr("stale"), HasSubstr("keystore /data/keystore.sbx"),
                                      HasSubstr("s ago)"), HasSubstr("--max-staleness=30s"),
                                      HasSubstr("connection refused")));
  EXPECT_GE(old.Staleness(), absl::Seconds(31));

  old.Confirm(SteadyClock::now());
  EXPECT_TRUE(old.Check().ok());
}

TEST(FreshnessTest, AnOlderProofChangesNothing) {
  Freshness freshness(absl::Seconds(10), "store");
  const auto now = SteadyClock::now();
  freshness.Confirm(now);
  freshness.Confirm(now - std::chrono::seconds(20));
  EXPECT_TRUE(freshness.Check().ok());
  EXPECT_LT(freshness.Staleness(), absl::Seconds(1));
}

TEST(FreshnessTest, UnboundedNeverRefuses) {
  Freshness freshness(absl::InfiniteDuration(), "store");
  EXPECT_TRUE(freshness.Check().ok());
  EXPECT_FALSE(freshness.bounded());
  freshness.Confirm(SteadyClock::now() - std::chrono::hours(24));
  EXPECT_TRUE(freshness.Check().ok());
  EXPECT_GE(freshness.Staleness(), absl::Hours(24));
}

// A proof exactly as old as the bound is already too old.
TEST(FreshnessTest, NeverCurrentPastTheBound) {
  Freshness freshness(absl::Seconds(10), "store");
  for (int i = 0; i < 1000; ++i) {
    freshness.Confirm(SteadyClock::now() - std::chrono::seconds(10));
    EXPECT_FALSE(freshness.Check().ok());
  }
}

TEST(FreshnessTest, BoundsAreWrittenAsTheFlagTakesThem) {
  EXPECT_EQ(FormatMaxStaleness(absl::Seconds(30)), "30s");
  EXPECT_EQ(FormatMaxStaleness(absl::Minutes(2)), "2m");
  EXPECT_EQ(FormatMaxStaleness(absl::InfiniteDuration()), "unbounded");
}

}  // namespace
}  // namespace sealbox::server
