// EtcdHeartbeat against a real etcd: a quiet keystore proven current by reading, the
// barrier a revision the watch delivers, another writer of the same etcd, and etcd
// gone and back.
#include "server/keystore/etcd/etcd_heartbeat.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/keystore/etcd/etcd_parts_testing.h"
#include "server/keystore/testing/etcd_cluster.h"

namespace sealbox::server::etcd {
namespace {

// The parts of one replica on `etcd`, following it from now.
struct FollowingReplica {
  explicit FollowingReplica(RecordsOnEtcd& etcd, absl::Duration interval = absl::Milliseconds(50))
      : watch(etcd.client(), etcd.records(), feed),
        heartbeat(etcd.client(), etcd.records(), watch, feed, interval) {
    feed.Start(&listener, static_cast<uint64_t>(etcd.Revision()));
    watch.Start();
    heartbeat.Start();
  }
  ~FollowingReplica() {
    watch.Stop();  // first, as EtcdStorage::Stop does
    heartbeat.Stop();
  }

  // Whether the listener is proven current as of a moment after now, within `within`.
  bool ProvenCurrentAfterNow(absl::Duration within = absl::Seconds(10)) {
    const auto now = std::chrono::steady_clock::now();
    return listener.WaitFor(
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(listener.mu) { return listener.current_as_of > now; },
        within);
  }

  ToldListener listener;
  ListenerFeed feed;
  EtcdWatch watch;
  EtcdHeartbeat heartbeat;
};

TEST(EtcdHeartbeatTest, AQuietKeystoreIsProvenCurrentEveryHeartbeat) {
  RecordsOnEtcd etcd;
  ASSERT_TRUE(etcd.records().Prepare(true).ok());
  FollowingReplica replica(etcd);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(replica.ProvenCurrentAfterNow());
  absl::MutexLock lock(&replica.listener.mu);
  EXPECT_TRUE(replica.listener.reachable);
  EXPECT_GE(replica.listener.proofs, 3);
}

// A barrier is a revision of our prefix: once the watch has delivered it, the
// listener has every change committed before it.
TEST(EtcdHeartbeatTest, ABarrierIsARevisionTheWatchDelivers) {
  RecordsOnEtcd etcd;
  ASSERT_TRUE(etcd.records().Prepare(true).ok());
  FollowingReplica replica(etcd, absl::Hours(1));  // one proof, then quiet
  const uint64_t tenant = etcd.PutTenant("acme").value_or(0);
  auto barrier = replica.heartbeat.Barrier(absl::Seconds(5));
  ASSERT_TRUE(barrier.ok()) << barrier.status();
  EXPECT_GT(*barrier, tenant);
  EXPECT_TRUE(replica.feed.WaitDelivered(*barrier, absl::Seconds(10)));
  absl::MutexLock lock(&replica.listener.mu);
  EXPECT_THAT(replica.listener.told,
              ::testing::Contains(absl::StrCat("apply ", tenant, " tenant acme")));
}

// Revisions outside the prefix never reach the watch: the heartbeat proves the
// keystore current by a barrier of its own instead.
TEST(EtcdHeartbeatTest, AnotherWriterOfTheSameEtcdDoesNotStopTheProof) {
  RecordsOnEtcd etcd;
  ASSERT_TRUE(etcd.records().Prepare(true).ok());
  FollowingReplica replica(etcd);
  for (int i = 0; i < 3; ++i) {
    etcdserverpb::TxnRequest put;
    put.add_success()->mutable_request_put()->set_key("/another-application/counter");
    ASSERT_TRUE(etcd.client().Txn(put).ok());
    EXPECT_TRUE(replica.ProvenCurrentAfterNow());
  }
}

// etcd gone: the listener is told at once, and proven current again by itself soon
// after etcd is back, following changes as before.
TEST(EtcdHeartbeatTest, EtcdGoneAndBack) {
  auto own = testing::EtcdCluster::Start(1);
  ASSERT_TRUE(own.ok()) << own.status();
  RecordsOnEtcd etcd((*own)->endpoints());
  ASSERT_TRUE(etcd.records().Prepare(true).ok());
  FollowingReplica replica(etcd);
  ASSERT_TRUE(replica.ProvenCurrentAfterNow());

  (*own)->Kill(0);
  EXPECT_TRUE(replica.listener.WaitFor([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(replica.listener.mu) {
    return !replica.listener.reachable;
  }));
  absl::Status restarted = (*own)->Restart(0);
  ASSERT_TRUE(restarted.ok()) << restarted;
  EXPECT_TRUE(replica.listener.WaitFor([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(replica.listener.mu) {
    return replica.listener.reachable;
  }));
  EXPECT_TRUE(replica.ProvenCurrentAfterNow());
  auto back = etcd.PutTenant("back");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(replica.feed.WaitDelivered(*back, absl::Seconds(10)));
}

}  // namespace
}  // namespace sealbox::server::etcd
