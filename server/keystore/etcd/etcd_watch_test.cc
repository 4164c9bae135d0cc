// EtcdWatch against a real etcd: delivery in commit order from the feed's revision,
// restarts that skip nothing, a resume from now held until the fresh read, and a
// compacted revision reloaded whole. Changes are written through EtcdRecords.
#include "server/keystore/etcd/etcd_watch.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/keystore/etcd/etcd_parts_testing.h"

namespace sealbox::server::etcd {
namespace {

using ::testing::ElementsAre;

// A keystore on the shared etcd, and a watch over it telling `listener`.
class EtcdWatchTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(etcd_.records().Prepare(true).ok()); }

  void StartFrom(uint64_t revision) {
    feed_.Start(&listener_, revision);
    watch_.Start();
  }

  // Waits until the listener has been told of `revision`; what it was told.
  std::vector<std::string> ToldUpTo(uint64_t revision) {
    EXPECT_TRUE(listener_.WaitFor([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(listener_.mu) {
      return listener_.revision >= revision;
    }));
    absl::MutexLock lock(&listener_.mu);
    return listener_.told;
  }

  uint64_t Put(const std::string& tenant, bool deleted = false) {
    auto revision = etcd_.PutTenant(tenant, deleted);
    EXPECT_TRUE(revision.ok()) << revision.status();
    return revision.value_or(0);
  }

  ToldListener listener_;  // outlives the watch's thread
  RecordsOnEtcd etcd_;
  ListenerFeed feed_;
  EtcdWatch watch_{etcd_.client(), etcd_.records(), feed_};
};

TEST_F(EtcdWatchTest, DeliversEachCommitInOrderAfterTheFeedsRevision) {
  const uint64_t before = Put("before");
  StartFrom(before);
  const uint64_t a = Put("a");
  const uint64_t b = Put("b");
  const uint64_t gone = Put("before", /*deleted=*/true);
  EXPECT_THAT(ToldUpTo(gone), ElementsAre(absl::StrCat("apply ", a, " tenant a"),
                                          absl::StrCat("apply ", b, " tenant b"),
                                          absl::StrCat("apply ", gone, " tenant before deleted")));
}

// A stream started again resumes from the revision after the last one told: nothing
// twice, nothing skipped, even for what was committed between two streams.
TEST_F(EtcdWatchTest, ARestartSkipsNothingAndRepeatsNothing) {
  StartFrom(static_cast<uint64_t>(etcd_.Revision()));
  std::vector<std::string> expected;
  uint64_t last = 0;
  for (int i = 0; i < 5; ++i) {
    watch_.Restart();
    const std::string name = absl::StrCat("t", i);
    last = Put(name);
    expected.push_back(absl::StrCat("apply ", last, " tenant ", name));
  }
  EXPECT_EQ(ToldUpTo(last), expected);
}

// A stream from etcd's revision now has a gap before it: what it delivers waits until
// the fresh read is in (the heartbeat's catch-up), then only what is newer follows.
TEST_F(EtcdWatchTest, AResumeFromNowIsHeldUntilTheFreshRead) {
  StartFrom(static_cast<uint64_t>(etcd_.Revision()));
  ASSERT_TRUE(watch_.ResumeFromNow(absl::Seconds(5)));
  const uint64_t held = Put("held");
  absl::SleepFor(absl::Milliseconds(200));
  {
    absl::MutexLock lock(&listener_.mu);
    EXPECT_TRUE(listener_.told.empty());
  }
  auto contents = etcd_.records().Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_THAT(feed_.Relisted(*contents), ::testing::Optional(contents->generation));
  const uint64_t after = Put("after");
  EXPECT_THAT(ToldUpTo(after), ElementsAre(absl::StrCat("reload ", contents->generation),
                                           absl::StrCat("apply ", after, " tenant after")));
  EXPECT_GE(contents->generation, held);
}

// The revisions after the feed's are gone from etcd: a whole load instead.
TEST_F(EtcdWatchTest, ACompactedRevisionIsReloadedWhole) {
  const uint64_t from = Put("a");
  Put("b");
  const uint64_t newest = Put("c");
  etcd_.Compact(static_cast<int64_t>(newest));
  StartFrom(from);
  std::vector<std::string> told = ToldUpTo(newest);
  ASSERT_FALSE(told.empty());
  EXPECT_TRUE(absl::StartsWith(told[0], "reload ")) << told[0];
}

// Stop ends the stream and the thread, from any state, and may be called again.
TEST_F(EtcdWatchTest, StopEndsTheWatch) {
  StartFrom(static_cast<uint64_t>(etcd_.Revision()));
  watch_.Restart();
  watch_.Stop();
  watch_.Stop();
  EXPECT_FALSE(watch_.ResumeFromNow(absl::Milliseconds(10)));
  Put("unseen");
  absl::SleepFor(absl::Milliseconds(100));
  absl::MutexLock lock(&listener_.mu);
  EXPECT_TRUE(listener_.told.empty());
}

}  // namespace
}  // namespace sealbox::server::etcd
