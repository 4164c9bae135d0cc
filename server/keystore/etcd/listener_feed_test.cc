// ListenerFeed alone, without etcd: what reaches the listener, and in what order.
#include "server/keystore/etcd/listener_feed.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/keystore/etcd/etcd_parts_testing.h"

namespace sealbox::server::etcd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

std::vector<RecordChange> TenantPut(const std::string& name) {
  internal::Record record;
  record.mutable_tenant()->set_name(name);
  std::vector<RecordChange> changes;
  changes.emplace_back(RecordName::Tenant(name), std::move(record));
  return changes;
}

KeystoreContents At(uint64_t generation) {
  KeystoreContents contents;
  contents.generation = generation;
  return contents;
}

// A feed telling `listener_`, which has been told of everything up to revision 10.
class ListenerFeedTest : public ::testing::Test {
 protected:
  void SetUp() override { feed_.Start(&listener_, 10); }

  std::vector<std::string> Told() {
    absl::MutexLock lock(&listener_.mu);
    return listener_.told;
  }

  ToldListener listener_;
  ListenerFeed feed_;
};

TEST(ListenerFeedAloneTest, NothingIsToldBeforeStart) {
  ToldListener listener;
  ListenerFeed feed;
  feed.Apply(TenantPut("early"), 3);
  EXPECT_FALSE(feed.Reload(At(4)));
  feed.Reachable(false, "gone");
  feed.CurrentAsOf(std::chrono::steady_clock::now());
  EXPECT_EQ(feed.Relisted(At(5)), std::nullopt);
  absl::MutexLock lock(&listener.mu);
  EXPECT_TRUE(listener.told.empty());
  EXPECT_TRUE(listener.reachable);
  EXPECT_EQ(listener.proofs, 0);
}

TEST_F(ListenerFeedTest, EachRevisionIsToldOnceAndOnlyForward) {
  feed_.Apply(TenantPut("old"), 10);
  feed_.Apply(TenantPut("a"), 11);
  feed_.Apply(TenantPut("again"), 11);
  EXPECT_FALSE(feed_.Reload(At(9)));
  EXPECT_TRUE(feed_.Reload(At(14)));
  feed_.Apply(TenantPut("behind"), 13);
  feed_.Apply(TenantPut("b"), 15);
  EXPECT_THAT(Told(), ElementsAre("apply 11 tenant a", "reload 14", "apply 15 tenant b"));
}

TEST_F(ListenerFeedTest, AStreamStartsAfterTheLastRevisionTold) {
  EXPECT_EQ(feed_.BeginStream(/*from_now=*/false), 11u);
  feed_.Apply(TenantPut("a"), 12);
  EXPECT_EQ(feed_.BeginStream(/*from_now=*/false), 13u);
  EXPECT_EQ(feed_.BeginStream(/*from_now=*/true), 0u);  // etcd's revision now
}

// A stream from now has a gap before it: what it delivers waits for the fresh read,
// and only what is newer than that read is applied after it.
TEST_F(ListenerFeedTest, AStreamFromNowIsHeldUntilRelisted) {
  feed_.BeginStream(/*from_now=*/true);
  feed_.Apply(TenantPut("in-the-read"), 12);
  feed_.Apply(TenantPut("after-the-read"), 15);
  EXPECT_THAT(Told(), IsEmpty());
  EXPECT_THAT(feed_.Relisted(At(13)), Optional(15u));
  feed_.Apply(TenantPut("next"), 16);
  EXPECT_THAT(Told(),
              ElementsAre("reload 13", "apply 15 tenant after-the-read", "apply 16 tenant next"));
}

// The stream from now ended before its read came in, and one from the last revision
// replaced it: the read is an ordinary reload, if newer.
TEST_F(ListenerFeedTest, ARelistWithoutAHoldingStreamIsAReload) {
  feed_.BeginStream(/*from_now=*/true);
  feed_.Apply(TenantPut("dropped"), 11);
  feed_.BeginStream(/*from_now=*/false);
  EXPECT_EQ(feed_.Relisted(At(9)), std::nullopt);
  EXPECT_EQ(feed_.Relisted(At(12)), std::nullopt);
  EXPECT_THAT(Told(), ElementsAre("reload 12"));
}

TEST_F(ListenerFeedTest, WaitDeliveredWaitsForTheRevision) {
  EXPECT_TRUE(feed_.WaitDelivered(10, absl::ZeroDuration()));
  EXPECT_FALSE(feed_.WaitDelivered(11, absl::Milliseconds(10)));
  std::thread later([&] {
    absl::SleepFor(absl::Milliseconds(20));
    feed_.Apply(TenantPut("a"), 17);
  });
  EXPECT_TRUE(feed_.WaitDelivered(17, absl::Seconds(10)));
  later.join();
}

TEST_F(ListenerFeedTest, ReachableAndCurrentArePassedOn) {
  const auto now = std::chrono::steady_clock::now();
  feed_.Reachable(false, "gone");
  feed_.CurrentAsOf(now);
  absl::MutexLock lock(&listener_.mu);
  EXPECT_FALSE(listener_.reachable);
  EXPECT_EQ(listener_.proofs, 1);
  EXPECT_EQ(listener_.current_as_of, now);
}

}  // namespace
}  // namespace sealbox::server::etcd
