// The etcd backend against a real etcd: its layout, what it refuses, its watch, and
// etcd going away. The keystore's logic over it is tested in keystore_test.cc.
#include "server/keystore/etcd/etcd_storage.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "server/keystore/keystore.h"
#include "server/keystore/testing/etcd_cluster.h"
#include "server/keystore/testing/test_store.h"

namespace sealbox::server::etcd {
namespace {

using ::testing::ElementsAre;
using testing::EtcdCluster;
using ::testing::HasSubstr;
using testing::RandomKek;
using ::testing::SizeIs;

// Raw access to the etcd a test runs against, to look at and tamper with it.
class RawEtcd {
 public:
  explicit RawEtcd(const std::string& endpoint)
      : kv_(etcdserverpb::KV::NewStub(
            grpc::CreateChannel(endpoint, grpc::InsecureChannelCredentials()))) {}

  std::map<std::string, std::string> All(const std::string& prefix) {
    etcdserverpb::RangeRequest request;
    request.set_key(prefix);
    request.set_range_end(PrefixEnd(prefix));
    etcdserverpb::RangeResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(kv_->Range(&context, request, &response).ok());
    std::map<std::string, std::string> out;
    for (const auto& kv : response.kvs()) out[kv.key()] = kv.value();
    return out;
  }

  int64_t Put(const std::string& key, const std::string& value) {
    etcdserverpb::PutRequest request;
    request.set_key(key);
    request.set_value(value);
    etcdserverpb::PutResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(kv_->Put(&context, request, &response).ok());
    return response.header().revision();
  }

  // etcd's revision now.
  int64_t Revision() {
    etcdserverpb::RangeRequest request;
    request.set_key("/");
    request.set_count_only(true);
    etcdserverpb::RangeResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(kv_->Range(&context, request, &response).ok());
    return response.header().revision();
  }

  void Delete(const std::string& key) {
    etcdserverpb::DeleteRangeRequest request;
    request.set_key(key);
    etcdserverpb::DeleteRangeResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(kv_->DeleteRange(&context, request, &response).ok());
  }

  void Compact(int64_t revision) {
    etcdserverpb::CompactionRequest request;
    request.set_revision(revision);
    request.set_physical(true);
    etcdserverpb::CompactionResponse response;
    grpc::ClientContext context;
    grpc::Status status = kv_->Compact(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
  }

 private:
  std::unique_ptr<etcdserverpb::KV::Stub> kv_;
};

// Remembers what a storage tells its listener.
class RecordingListener : public StorageListener {
 public:
  void Reload(const KeystoreContents& contents) override {
    absl::MutexLock lock(&mu_);
    reloads_.push_back(contents.generation);
    revision_ = contents.generation;
  }
  void Apply(const std::vector<RecordChange>& changes, uint64_t revision) override {
    absl::MutexLock lock(&mu_);
    for (const RecordChange& c : changes) applied_.push_back(c.name.ToString());
    revision_ = revision;
  }
  void Reachable(bool reachable, absl::string_view) override {
    absl::MutexLock lock(&mu_);
    reachable_ = reachable;
  }
  void CurrentAsOf(std::chrono::steady_clock::time_point as_of) override {
    absl::MutexLock lock(&mu_);
    current_as_of_ = std::max(current_as_of_, as_of);
  }
  bool WaitFor(const std::function<bool()>& condition) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      {
        absl::MutexLock lock(&mu_);
        if (condition()) return true;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

  absl::Mutex mu_;
  std::vector<uint64_t> reloads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> applied_ ABSL_GUARDED_BY(mu_);
  uint64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  bool reachable_ ABSL_GUARDED_BY(mu_) = true;
  std::chrono::steady_clock::time_point current_as_of_ ABSL_GUARDED_BY(mu_);
};

class EtcdStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = testing::SharedEtcd();
    ASSERT_NE(cluster_, nullptr);
    raw_ = std::make_unique<RawEtcd>(cluster_->endpoints()[0]);
    static int next = 0;
    prefix_ = absl::StrCat("/etcd-test-", next++, "/");
  }

  EtcdStorageOptions Options(const std::vector<std::string>& endpoints = {}) {
    EtcdStorageOptions options;
    options.etcd.endpoints = endpoints.empty() ? cluster_->endpoints() : endpoints;
    options.etcd.request_timeout = absl::Seconds(2);
    options.prefix = prefix_;
    options.kek = kek_.Clone();
    options.page_size = 3;
    return options;
  }

  absl::StatusOr<std::unique_ptr<Keystore>> Open(
      EtcdStorageOptions options, bool create = true,
      absl::Duration max_staleness = absl::InfiniteDuration()) {
    auto storage = EtcdStorage::Create(std::move(options));
    if (!storage.ok()) return storage.status();
    KeystoreOpenOptions open;
    open.create = create;
    open.max_staleness = max_staleness;
    return Keystore::Open(*std::move(storage), std::move(open));
  }

  std::unique_ptr<Keystore> OpenOrDie() {
    auto keystore = Open(Options());
    EXPECT_TRUE(keystore.ok()) << keystore.status();
    return keystore.ok() ? *std::move(keystore) : nullptr;
  }

  // Every etcd key under the prefix but the barrier key, which a heartbeat writes
  // (empty) when its watch lags, as on a busy machine: the marker and the records.
  std::map<std::string, std::string> StoredRecords() {
    std::map<std::string, std::string> all = raw_->All(prefix_);
    if (auto sync = all.find(prefix_ + "sync"); sync != all.end()) {
      EXPECT_EQ(sync->second, "");
      all.erase(sync);
    }
    return all;
  }

  EtcdCluster* cluster_ = nullptr;
  std::unique_ptr<RawEtcd> raw_;
  std::string prefix_;
  Kek kek_ = RandomKek();
};

TEST_F(EtcdStorageTest, OneEtcdKeyPerRecordAndNoMaterialInTheClear) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
  std::vector<uint8_t> material;
  for (int i = 0; i < 32; ++i) material.push_back(i % 2 ? 0x24 : 0x42);
  ASSERT_TRUE(ks->keys().ImportKey("acme", "db", material).ok());
  auto token = ks->tokens().IssueToken("acme", "billing");
  ASSERT_TRUE(token.ok());
  std::map<std::string, std::string> all = StoredRecords();
  std::vector<std::string> keys;
  for (const auto& [key, value] : all) keys.push_back(key);
  EXPECT_THAT(keys, ElementsAre(prefix_ + "keystore", prefix_ + "tenants/acme",
                                prefix_ + "tenants/acme/keys/db",
                                prefix_ + "tenants/acme/tokens/" + token->info.id));
  for (const auto& [key, value] : all) {
    EXPECT_TRUE(absl::StartsWith(value, "SBXR")) << key;
    EXPECT_FALSE(absl::StrContains(value, "\x42\x24\x42\x24\x42\x24\x42\x24")) << key;
    EXPECT_FALSE(absl::StrContains(value, "billing")) << key;
  }
}

TEST_F(EtcdStorageTest, AValueMovedOrTruncatedIsRefusedNamingTheRecord) {
  {
    auto ks = OpenOrDie();
    ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
    ASSERT_TRUE(ks->tenants().CreateTenant("evil").ok());
    ASSERT_TRUE(ks->keys().CreateKey("acme", "a", KeyAlgorithm::kAes256Gcm).ok());
    ASSERT_TRUE(ks->keys().CreateKey("acme", "b", KeyAlgorithm::kAes256Gcm).ok());
  }
  std::map<std::string, std::string> good = raw_->All(prefix_);
  const std::string a = prefix_ + "tenants/acme/keys/a";
  const std::string b = prefix_ + "tenants/acme/keys/b";
  const std::string stolen = prefix_ + "tenants/evil/keys/a";
  struct Tamper {
    std::string key, value, named;
  };
  for (const Tamper& t : std::vector<Tamper>{
           {b, good[a], b},                                // another name
           {stolen, good[a], stolen},                      // another tenant
           {a, good[a].substr(0, good[a].size() - 1), a},  // truncated
           {a, good[a].substr(0, 20), a},                  // header cut short
           {a, "", a},                                     // empty
       }) {
    raw_->Put(t.key, t.value);
    auto ks = Open(Options(), /*create=*/false);
    EXPECT_TRUE(absl::IsDataLoss(ks.status())) << ks.status();
    EXPECT_EQ(
        ks.status().message(),
        absl::StrCat("etcd record ", t.named, " is damaged, or was moved there from another name"));
    raw_->Put(a, good[a]);
    raw_->Put(b, good[b]);
    raw_->Delete(stolen);
  }
  // A value moved to another prefix does not open there either.
  const std::string other = absl::StrCat("/elsewhere-", prefix_.substr(1));
  raw_->Put(other + "keystore", good[prefix_ + "keystore"]);
  EtcdStorageOptions elsewhere = Options();
  elsewhere.prefix = other;
  auto moved = Open(std::move(elsewhere), /*create=*/false);
  EXPECT_TRUE(absl::IsDataLoss(moved.status())) << moved.status();
  EXPECT_THAT(moved.status().message(), HasSubstr(other + "keystore"));
}

TEST_F(EtcdStorageTest, WrongKekIsTheSameClearErrorAsTheFile) {
  ASSERT_NE(OpenOrDie(), nullptr);
  EtcdStorageOptions options = Options();
  options.kek = RandomKek();
  auto ks = Open(std::move(options));
  EXPECT_TRUE(absl::IsFailedPrecondition(ks.status()));
  EXPECT_EQ(ks.status().message(),
            absl::StrCat("etcd keystore ", prefix_, " at ", cluster_->endpoints()[0],
                         " was written with a different KEK"));
}

TEST_F(EtcdStorageTest, InitRefusesAPrefixHoldingSomethingElse) {
  raw_->Put(prefix_ + "config", "someone else's");
  auto ks = Open(Options());
  EXPECT_TRUE(absl::IsFailedPrecondition(ks.status())) << ks.status();
  EXPECT_THAT(ks.status().message(), HasSubstr("holds 1 keys but no sealbox keystore"));
  auto without = Open(Options(), /*create=*/false);
  EXPECT_TRUE(absl::IsNotFound(without.status()));
  EXPECT_THAT(without.status().message(), HasSubstr("start one server with --init"));
}

TEST_F(EtcdStorageTest, ATenantWithTenThousandKeys) {
  KeystoreContents contents;
  internal::Tenant* tenant = contents.file.add_tenants();
  tenant->set_name("big");
  for (int i = 0; i < 10000; ++i) {
    internal::Key* key = tenant->add_keys();
    key->set_name(absl::StrCat("k", i));
    key->set_algorithm(internal::AES_256_GCM);
    key->set_primary_version(1);
    key->set_min_decryption_version(1);
    internal::KeyVersion* v = key->add_versions();
    v->set_version(1);
    v->set_state(internal::ENABLED);
    v->set_material(std::string(32, static_cast<char>(i)));
  }
  auto storage = EtcdStorage::Create(Options());
  ASSERT_TRUE(storage.ok());
  ASSERT_TRUE((*storage)->Import(contents).ok());
  EtcdStorageOptions options = Options();
  options.page_size = 2000;
  auto ks = Open(std::move(options), /*create=*/false);
  ASSERT_TRUE(ks.ok()) << ks.status();
  EXPECT_THAT((*ks)->snapshot()->FindTenant("big")->keys, SizeIs(10000));
  ASSERT_TRUE((*ks)->keys().RotateKey("big", "k9999").ok());
  ASSERT_TRUE((*ks)->keys().CreateKey("big", "new", KeyAlgorithm::kAes256Gcm).ok());
  EXPECT_THAT((*ks)->snapshot()->FindTenant("big")->keys, SizeIs(10001));
  // One DeleteRange takes every key with the tenant.
  ASSERT_TRUE((*ks)->tenants().DeleteTenant("big").ok());
  EXPECT_THAT(StoredRecords(), SizeIs(1));  // the marker
  EXPECT_EQ((*ks)->snapshot()->FindTenant("big"), nullptr);
}

TEST_F(EtcdStorageTest, ImportRefusesANonEmptyPrefix) {
  ASSERT_NE(OpenOrDie(), nullptr);
  auto storage = EtcdStorage::Create(Options());
  ASSERT_TRUE(storage.ok());
  absl::Status s = (*storage)->Import(KeystoreContents());
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("is not empty"));
}

TEST_F(EtcdStorageTest, ChangesArriveByWatchInCommitOrder) {
  auto a = OpenOrDie();
  RecordingListener listener;  // before the storage: it must outlive the watch thread
  auto storage = EtcdStorage::Create(Options());
  ASSERT_TRUE(storage.ok());
  auto contents = (*storage)->Load();
  ASSERT_TRUE(contents.ok());
  (*storage)->Follow(contents->generation, &listener);
  ASSERT_TRUE(a->tenants().CreateTenant("acme").ok());
  ASSERT_TRUE(a->keys().CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(a->tenants().DeleteTenant("acme").ok());
  // At least the delete's revision: a heartbeat's barrier (an empty key, no record)
  // may have come after it, on a busy machine.
  const uint64_t deleted_at = a->snapshot()->generation();
  ASSERT_TRUE(listener.WaitFor([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(listener.mu_) {
    return listener.applied_.size() >= 4 && listener.revision_ >= deleted_at;
  }));
  absl::MutexLock lock(&listener.mu_);
  EXPECT_THAT(listener.applied_,
              ElementsAre("tenant acme", "key acme/k", "tenant acme", "key acme/k"));
  EXPECT_TRUE(listener.reloads_.empty());
}

// A watch that starts from a revision etcd has compacted away reloads everything at
// one revision instead.
TEST_F(EtcdStorageTest, ACompactedWatchReloadsEverything) {
  auto a = OpenOrDie();
  RecordingListener listener;  // before the storage: it must outlive the watch thread
  auto storage = EtcdStorage::Create(Options());
  ASSERT_TRUE(storage.ok());
  auto contents = (*storage)->Load();
  ASSERT_TRUE(contents.ok());
  ASSERT_TRUE(a->tenants().CreateTenant("acme").ok());
  ASSERT_TRUE(a->keys().CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  raw_->Compact(static_cast<int64_t>(a->snapshot()->generation()));
  (*storage)->Follow(contents->generation, &listener);
  ASSERT_TRUE(listener.WaitFor(
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(listener.mu_) { return !listener.reloads_.empty(); }));
  absl::MutexLock lock(&listener.mu_);
  EXPECT_GE(listener.reloads_[0], a->snapshot()->generation());
  EXPECT_TRUE(listener.applied_.empty());
}

// etcd down: the snapshot keeps serving, writes say the store is unreachable, and
// everything comes back by itself, with changes made meanwhile by another replica.
TEST_F(EtcdStorageTest, EtcdGoneAndBack) {
  auto own = EtcdCluster::Start(1);
  ASSERT_TRUE(own.ok()) << own.status();
  EtcdCluster& etcd = **own;
  auto a = Open(Options(etcd.endpoints()));
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = Open(Options(etcd.endpoints()));
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE((*a)->tenants().CreateTenant("acme").ok());
  ASSERT_TRUE((*a)->keys().CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE((*b)->Refresh().ok());  // b has the key before etcd goes

  etcd.Kill(0);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while ((*b)->Writable().ok() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
  absl::Status writable = (*b)->Writable();
  EXPECT_TRUE(absl::IsUnavailable(writable)) << writable;
  EXPECT_THAT(writable.message(), HasSubstr("is unreachable"));
  EXPECT_TRUE((*b)->Loaded().ok());
  EXPECT_NE((*b)->snapshot()->FindKey("acme", "k"), nullptr);  // still serving
  absl::Status rotate = (*b)->keys().RotateKey("acme", "k").status();
  EXPECT_TRUE(absl::IsUnavailable(rotate)) << rotate;

  absl::Status restarted = etcd.Restart(0);
  ASSERT_TRUE(restarted.ok()) << restarted;
  const absl::Time back = absl::Now() + absl::Seconds(15);
  while (!(*a)->Writable().ok() && absl::Now() < back) absl::SleepFor(absl::Milliseconds(20));
  ASSERT_TRUE((*a)->Writable().ok());
  auto rotated = (*a)->keys().RotateKey("acme", "k");
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  while ((*b)->snapshot()->FindKey("acme", "k")->primary_version != 2 && absl::Now() < back) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ((*b)->snapshot()->FindKey("acme", "k")->primary_version, 2u);
  // Writable once its heartbeat has proved it current again, which may come a moment
  // after its watch delivered the change.
  while (!(*b)->Writable().ok() && absl::Now() < back) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_TRUE((*b)->Writable().ok()) << (*b)->Writable();
}

// Opening while etcd is down keeps trying in the background and serves nothing until
// it has loaded.
TEST_F(EtcdStorageTest, OpeningWhileEtcdIsDownLoadsOnceItIsUp) {
  auto own = EtcdCluster::Start(1);
  ASSERT_TRUE(own.ok()) << own.status();
  EtcdCluster& etcd = **own;
  ASSERT_TRUE(Open(Options(etcd.endpoints())).ok());  // --init, then gone
  etcd.Kill(0);
  auto storage = EtcdStorage::Create(Options(etcd.endpoints()));
  ASSERT_TRUE(storage.ok());
  KeystoreOpenOptions open;
  open.keep_trying = true;
  std::atomic<int> writable_calls{0};
  open.on_writable = [&](bool) { ++writable_calls; };
  auto ks = Keystore::Open(*std::move(storage), std::move(open));
  ASSERT_TRUE(ks.ok()) << ks.status();
  absl::Status loaded = (*ks)->Loaded();
  EXPECT_TRUE(absl::IsUnavailable(loaded));
  EXPECT_THAT(loaded.message(), HasSubstr("is not loaded yet"));
  EXPECT_TRUE(absl::IsUnavailable((*ks)->tenants().CreateTenant("acme").status()));
  absl::Status restarted = etcd.Restart(0);
  ASSERT_TRUE(restarted.ok()) << restarted;
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (!(*ks)->Loaded().ok() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  EXPECT_TRUE((*ks)->Loaded().ok());
  EXPECT_TRUE((*ks)->tenants().CreateTenant("acme").ok());
  EXPECT_GE(writable_calls.load(), 1);
}

// A quiet keystore is proven current every heartbeat by a read (etcd's revision, which
// its watch has delivered), not by a write: etcd's revision does not move.
TEST_F(EtcdStorageTest, HeartbeatsProveCurrentByReadingNotWriting) {
  EtcdStorageOptions options = Options();
  options.heartbeat = absl::Milliseconds(100);
  auto ks = Open(std::move(options), true, absl::Seconds(5));
  ASSERT_TRUE(ks.ok()) << ks.status();
  ASSERT_TRUE((*ks)->tenants().CreateTenant("acme").ok());
  absl::SleepFor(absl::Milliseconds(300));
  const int64_t before = raw_->Revision();
  for (int i = 0; i < 10; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
    // A heartbeat every 100 ms; room for a slow one (this also runs under ASan).
    EXPECT_LT((*ks)->Health().staleness, absl::Seconds(1));
    EXPECT_TRUE((*ks)->Serving().ok());
  }
  EXPECT_EQ(raw_->Revision(), before);
}

// Another writer of the same etcd makes revisions the watch never sees (outside the
// prefix): a barrier revision of our own then proves the keystore current.
TEST_F(EtcdStorageTest, HeartbeatsStayCurrentWhileOthersWriteTheSameEtcd) {
  EtcdStorageOptions options = Options();
  options.heartbeat = absl::Milliseconds(100);
  auto ks = Open(std::move(options), true, absl::Seconds(5));
  ASSERT_TRUE(ks.ok()) << ks.status();
  absl::Duration worst;
  for (int i = 0; i < 75; ++i) {
    raw_->Put("/another-application/counter", absl::StrCat(i));
    absl::SleepFor(absl::Milliseconds(20));
    if (i >= 25) worst = std::max(worst, (*ks)->Health().staleness);
  }
  EXPECT_LT(worst, absl::Milliseconds(1500));
  EXPECT_TRUE((*ks)->Serving().ok());
}

// Cut off from etcd, a keystore serves until --max-staleness, then refuses saying
// why, and serves again by itself once etcd is back.
TEST_F(EtcdStorageTest, StaleAfterTheBoundAndServingAgainOnceEtcdIsBack) {
  auto own = EtcdCluster::Start(1);
  ASSERT_TRUE(own.ok()) << own.status();
  EtcdCluster& etcd = **own;
  EtcdStorageOptions options = Options(etcd.endpoints());
  options.heartbeat = absl::Milliseconds(200);
  auto ks = Open(std::move(options), true, absl::Seconds(2));
  ASSERT_TRUE(ks.ok()) << ks.status();
  ASSERT_TRUE((*ks)->Serving().ok());

  const absl::Time killed = absl::Now();
  etcd.Kill(0);
  while ((*ks)->Serving().ok() && absl::Now() < killed + absl::Seconds(10)) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  const absl::Duration served_for = absl::Now() - killed;
  // The last proof began before the kill, about a heartbeat (and its read) before
  // it: refused by the bound after the kill, not long before.
  EXPECT_GE(served_for, absl::Milliseconds(1000));
  EXPECT_LE(served_for, absl::Milliseconds(2100));
  absl::Status stale = (*ks)->Serving();
  EXPECT_TRUE(absl::IsUnavailable(stale)) << stale;
  EXPECT_THAT(stale.message(), HasSubstr("stale"));
  EXPECT_THAT(stale.message(), HasSubstr("--max-staleness=2s"));
  KeystoreHealth health = (*ks)->Health();
  EXPECT_FALSE(health.fresh);
  EXPECT_FALSE(health.reachable);
  EXPECT_GE(health.stale_refusals, 1u);
  EXPECT_NE((*ks)->snapshot(), nullptr);

  absl::Status restarted = etcd.Restart(0);
  ASSERT_TRUE(restarted.ok()) << restarted;
  const absl::Time back = absl::Now() + absl::Seconds(15);
  while (!(*ks)->Serving().ok() && absl::Now() < back) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_TRUE((*ks)->Serving().ok());
  EXPECT_TRUE((*ks)->Health().fresh);
}

}  // namespace
}  // namespace sealbox::server::etcd
