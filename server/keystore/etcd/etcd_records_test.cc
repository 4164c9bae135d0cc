// EtcdRecords against a real etcd: the marker, transactions racing, loading in pages,
// import and rewrap. No watch and no heartbeat here.
#include "server/keystore/etcd/etcd_records.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/keystore/etcd/etcd_parts_testing.h"

namespace sealbox::server::etcd {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

std::vector<std::string> TenantNames(const KeystoreContents& contents) {
  std::vector<std::string> names;
  for (const internal::Tenant& tenant : contents.file.tenants()) names.push_back(tenant.name());
  return names;
}

TEST(EtcdRecordsTest, PrepareCreatesOneMarkerThatAnotherReplicaFinds) {
  RecordsOnEtcd etcd;
  absl::Status absent = etcd.records().Prepare(/*create=*/false).status();
  EXPECT_TRUE(absl::IsNotFound(absent)) << absent;
  auto created = etcd.records().Prepare(/*create=*/true);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE(*created);  // nothing to rewrap
  std::unique_ptr<EtcdRecords> other = etcd.NewRecords(etcd.kek().Clone());
  auto found = other->Prepare(/*create=*/true);  // finds it: no second marker
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(other->Count().value_or(-1), 1);
  auto contents = other->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_GT(contents->generation, 0u);
  EXPECT_THAT(contents->file.tenants(), SizeIs(0));
}

// Of two transactions that read the same record, the second to commit is told
// ABORTED: the compare on mod_revision is the answer to the race.
TEST(EtcdRecordsTest, ATransactionLosesToAWriteAfterItsRead) {
  RecordsOnEtcd etcd;
  ASSERT_TRUE(etcd.records().Prepare(true).ok());
  auto first = etcd.records().Begin();
  auto second = etcd.records().Begin();
  ASSERT_TRUE(first.ok() && second.ok());
  for (auto* transaction : {&*first, &*second}) {
    auto read = (**transaction).Read(RecordName::Tenant("acme"));
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_FALSE(read->has_value());
  }
  auto commit = [](StorageTransaction& transaction) {
    internal::Record record;
    record.mutable_tenant()->set_name("acme");
    std::vector<RecordChange> changes;
    changes.emplace_back(RecordName::Tenant("acme"), std::move(record));
    return transaction.Commit(std::move(changes));
  };
  auto won = commit(**second);
  ASSERT_TRUE(won.ok()) << won.status();
  auto lost = commit(**first);
  EXPECT_TRUE(absl::IsAborted(lost.status())) << lost.status();
  auto contents = etcd.records().Load();
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(contents->generation, *won);
  EXPECT_THAT(TenantNames(*contents), ::testing::ElementsAre("acme"));
}

// Pages of three, each at the marker's revision: a write meanwhile is not half in.
TEST(EtcdRecordsTest, LoadPagesThroughEveryRecord) {
  RecordsOnEtcd etcd(/*endpoints=*/{}, /*page_size=*/3);
  ASSERT_TRUE(etcd.records().Prepare(true).ok());
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(etcd.PutTenant(absl::StrCat("t", i)).ok());
  ASSERT_TRUE(etcd.PutTenant("t3", /*deleted=*/true).ok());
  auto contents = etcd.records().Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_THAT(TenantNames(*contents),
              ::testing::ElementsAre("t0", "t1", "t2", "t4", "t5", "t6", "t7"));
  EXPECT_EQ(etcd.records().Count().value_or(-1), 8);  // the marker and seven
}

TEST(EtcdRecordsTest, ImportFillsAnEmptyPrefixMarkerLast) {
  RecordsOnEtcd etcd;
  KeystoreContents contents;
  for (const char* name : {"a", "b"}) contents.file.add_tenants()->set_name(name);
  ASSERT_TRUE(etcd.records().Import(contents).ok());
  auto loaded = etcd.records().Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(TenantNames(*loaded), ::testing::ElementsAre("a", "b"));
  absl::Status again = etcd.records().Import(contents);
  EXPECT_TRUE(absl::IsFailedPrecondition(again)) << again;
  EXPECT_THAT(again.message(), HasSubstr("is not empty"));
}

// A replica given the new KEK and the one before writes every record again under the
// new one; after that, the old KEK alone opens nothing.
TEST(EtcdRecordsTest, PrepareRewrapsWhatTheKekBeforeWrote) {
  RecordsOnEtcd etcd;
  ASSERT_TRUE(etcd.records().Prepare(true).ok());
  for (const char* name : {"a", "b", "c", "d"}) ASSERT_TRUE(etcd.PutTenant(name).ok());
  const Kek next = testing::RandomKek();
  std::vector<Kek> previous;
  previous.push_back(etcd.kek().Clone());
  std::unique_ptr<EtcdRecords> rotated = etcd.NewRecords(next.Clone(), 3, std::move(previous));
  auto rewrapped = rotated->Prepare(/*create=*/false);
  ASSERT_TRUE(rewrapped.ok()) << rewrapped.status();
  EXPECT_TRUE(*rewrapped);
  EXPECT_EQ(rotated->RewrapAll(RewrapPace()).value_or(99), 0u);  // nothing left
  std::unique_ptr<EtcdRecords> only_next = etcd.NewRecords(next.Clone());
  auto contents = only_next->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_THAT(TenantNames(*contents), ::testing::ElementsAre("a", "b", "c", "d"));
  absl::Status old = etcd.records().Load().status();
  EXPECT_TRUE(absl::IsFailedPrecondition(old)) << old;
  EXPECT_THAT(old.message(), HasSubstr("was written with a different KEK"));
}

// A stopped store does not wait between attempts: a rewrap ends at once.
TEST(EtcdRecordsTest, AStoppedRewrapEndsCancelled) {
  RecordsOnEtcd etcd;
  ASSERT_TRUE(etcd.records().Prepare(true).ok());
  ASSERT_TRUE(etcd.PutTenant("a").ok());
  std::vector<Kek> previous;
  previous.push_back(etcd.kek().Clone());
  std::unique_ptr<EtcdRecords> rotated =
      etcd.NewRecords(testing::RandomKek(), 3, std::move(previous));
  rotated->Stop();
  rotated->Stop();  // idempotent
  RewrapPace slow;
  slow.records_per_second = 0.1;
  absl::Status stopped = rotated->RewrapAll(slow).status();
  EXPECT_TRUE(absl::IsCancelled(stopped)) << stopped;
}

}  // namespace
}  // namespace sealbox::server::etcd
