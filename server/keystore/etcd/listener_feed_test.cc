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

std::vector<std::string> Told(ToldListener& listener) {
  absl::MutexLock lock(&listener.mu);
  return listener.told;
}

TEST(ListenerFeedTest, EachRevisionIsToldOnceAndOnlyForward) {
  ToldListener listener;
  ListenerFeed feed;
  feed.Apply(TenantPut("early"), 3);  // before Start: nobody to tell
  feed.Start(&listener, 5);
  feed.Apply(TenantPut("old"), 5);
  feed.Apply(TenantPut("a"), 6);
  feed.Apply(TenantPut("again"), 6);
  EXPECT_FALSE(feed.Reload(At(4)));
  EXPECT_TRUE(feed.Reload(At(9)));
  feed.Apply(TenantPut("behind"), 8);
  feed.Apply(TenantPut("b"), 10);
  EXPECT_THAT(Told(listener), ElementsAre("apply 6 tenant a", "reload 9", "apply 10 tenant b"));
}

TEST(ListenerFeedTest, AStreamStartsAfterTheLastRevisionTold) {
  ToldListener listener;
  ListenerFeed feed;
  feed.Start(&listener, 10);
  EXPECT_EQ(feed.BeginStream(/*from_now=*/false), 11u);
  feed.Apply(TenantPut("a"), 12);
  EXPECT_EQ(feed.BeginStream(/*from_now=*/false), 13u);
  EXPECT_EQ(feed.BeginStream(/*from_now=*/true), 0u);  // etcd's revision now
}

// A stream from now has a gap before it: what it delivers waits for the fresh read,
// and only what is newer than that read is applied after it.
TEST(ListenerFeedTest, AStreamFromNowIsHeldUntilRelisted) {
  ToldListener listener;
  ListenerFeed feed;
  feed.Start(&listener, 10);
  feed.BeginStream(/*from_now=*/true);
  feed.Apply(TenantPut("in-the-read"), 12);
  feed.Apply(TenantPut("after-the-read"), 15);
  EXPECT_THAT(Told(listener), IsEmpty());
  EXPECT_THAT(feed.Relisted(At(13)), Optional(15u));
  feed.Apply(TenantPut("next"), 16);
  EXPECT_THAT(Told(listener),
              ElementsAre("reload 13", "apply 15 tenant after-the-read", "apply 16 tenant next"));
}

// The stream from now ended before its read came in, and one from the last revision
// replaced it: the read is an ordinary reload, if newer.
TEST(ListenerFeedTest, ARelistWithoutAHoldingStreamIsAReload) {
  ToldListener listener;
  ListenerFeed feed;
  feed.Start(&listener, 10);
  feed.BeginStream(/*from_now=*/true);
  feed.Apply(TenantPut("dropped"), 11);
  feed.BeginStream(/*from_now=*/false);
  EXPECT_EQ(feed.Relisted(At(9)), std::nullopt);
  EXPECT_EQ(feed.Relisted(At(12)), std::nullopt);
  EXPECT_THAT(Told(listener), ElementsAre("reload 12"));
}

TEST(ListenerFeedTest, WaitDeliveredWaitsForTheRevision) {
  ToldListener listener;
  ListenerFeed feed;
  feed.Start(&listener, 1);
  EXPECT_TRUE(feed.WaitDelivered(1, absl::ZeroDuration()));
  EXPECT_FALSE(feed.WaitDelivered(2, absl::Milliseconds(10)));
  std::thread later([&] {
    absl::SleepFor(absl::Milliseconds(20));
    feed.Apply(TenantPut("a"), 7);
  });
  EXPECT_TRUE(feed.WaitDelivered(7, absl::Seconds(10)));
  later.join();
}

TEST(ListenerFeedTest, ReachableAndCurrentArePassedOn) {
  ToldListener listener;
  ListenerFeed feed;
  const auto now = std::chrono::steady_clock::now();
  feed.CurrentAsOf(now);  // before Start: nobody to tell
  feed.Start(&listener, 1);
  feed.Reachable(false, "gone");
  feed.CurrentAsOf(now);
  absl::MutexLock lock(&listener.mu);
  EXPECT_FALSE(listener.reachable);
  EXPECT_EQ(listener.proofs, 1);
  EXPECT_EQ(listener.current_as_of, now);
}

}  // namespace
}  // namespace sealbox::server::etcd
