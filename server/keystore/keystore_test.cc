// Keystore: opening (creating, rewrapping under a new KEK), following the store, transactions and
// epochs; run over every backend (testing/test_store.h): the same suite for the file and for etcd.
// Backend details are tested beside each backend.
#include "server/keystore/keystore.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/auth/tokens.h"
#include "server/keystore/names.h"
#include "server/keystore/testing/keystore_fixture.h"
#include "server/keystore/testing/test_store.h"

namespace sealbox::server {
namespace {

using ::testing::HasSubstr;
using testing::Material;
using ::testing::Not;
using testing::RandomKek;
using ::testing::SizeIs;

class KeystoreTest : public testing::KeystoreFixture {};

TEST_P(KeystoreTest, StartsEmpty) {
  auto ks = OpenOrDie();
  EXPECT_TRUE(ks->snapshot()->tenants().empty());
  EXPECT_GT(ks->snapshot()->generation(), 0u);
  EXPECT_TRUE(ks->Loaded().ok());
  EXPECT_TRUE(ks->Writable().ok());
}

TEST_P(KeystoreTest, NoKeystoreIsNotFoundWithoutCreate) {
  auto ks = testing::OpenKeystore(*store_, kek_, /*create=*/false);
  EXPECT_TRUE(absl::IsNotFound(ks.status())) << ks.status();
}

TEST_P(KeystoreTest, ReopenSeesEverything) {
  std::string token;
  std::vector<uint8_t> material = Material(32, 0x5a);
  {
    auto ks = OpenOrDie();
    ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
    ASSERT_TRUE(ks->keys().CreateKey("acme", "db", KeyAlgorithm::kAes128Gcm).ok());
    ASSERT_TRUE(ks->keys().RotateKey("acme", "db").ok());
    ASSERT_TRUE(ks->keys().ImportKey("acme", "byok", material).ok());
    auto issued = ks->tokens().IssueToken("acme", "billing");
    ASSERT_TRUE(issued.ok());
    token = issued->token;
  }
  auto ks = OpenOrDie(/*create=*/false);
  auto snap = ks->snapshot();
  EXPECT_EQ(*snap->TenantForToken(token), "acme");
  const KeyEntry* db = snap->FindKey("acme", "db");
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->algorithm, KeyAlgorithm::kAes128Gcm);
  EXPECT_EQ(db->primary_version, 2u);
  EXPECT_THAT(db->versions, SizeIs(2));
  EXPECT_EQ(db->versions.at(1).material->size(), 16u);
  const KeyEntry* byok = snap->FindKey("acme", "byok");
  ASSERT_NE(byok, nullptr);
  EXPECT_TRUE(byok->versions.at(1).imported);
  EXPECT_EQ(std::vector<uint8_t>(byok->versions.at(1).material->span().begin(),
                                 byok->versions.at(1).material->span().end()),
            material);
  TenantInfo tenant = snap->FindTenant("acme")->Info();
  EXPECT_THAT(tenant.keys, SizeIs(2));
  ASSERT_THAT(tenant.tokens, SizeIs(1));
  EXPECT_EQ(tenant.tokens[0].description, "billing");
}

TEST_P(KeystoreTest, WrongKekIsAClearError) {
  ASSERT_TRUE(OpenOrDie()->tenants().CreateTenant("acme").ok());
  auto ks = testing::OpenKeystore(*store_, RandomKek(), /*create=*/true);
  EXPECT_TRUE(absl::IsFailedPrecondition(ks.status())) << ks.status();
  EXPECT_THAT(ks.status().message(), HasSubstr("was written with a different KEK"));
  // And it changed nothing: the right KEK still opens it.
  EXPECT_NE(OpenOrDie(/*create=*/false)->snapshot()->FindTenant("acme"), nullptr);
}

TEST_P(KeystoreTest, ChangingTheKekRewrapsUnderTheNewOneAtOpen) {
  {
    auto old = OpenOrDie();
    ASSERT_TRUE(old->tenants().CreateTenant("acme").ok());
    ASSERT_TRUE(old->keys().CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
    ASSERT_TRUE(old->tokens().IssueToken("acme", "t").ok());
  }
  const Kek old_kek = kek_.Clone();
  kek_ = RandomKek();

  // The new KEK alone cannot read it yet.
  EXPECT_TRUE(
      absl::IsFailedPrecondition(testing::OpenKeystore(*store_, kek_, /*create=*/false).status()));

  // With the old one as the previous KEK: opened, and rewritten under the new one.
  auto changed = testing::OpenKeystore(*store_, kek_, /*create=*/false, &old_kek);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE((*changed)->rewrapped_at_open());
  EXPECT_NE((*changed)->snapshot()->FindKey("acme", "k"), nullptr);

  // Now the new KEK alone opens it, with nothing to rewrap, and the old one cannot.
  auto after = OpenOrDie(/*create=*/false);
  ASSERT_NE(after, nullptr);
  EXPECT_FALSE(after->rewrapped_at_open());
  EXPECT_NE(after->snapshot()->FindKey("acme", "k"), nullptr);
  EXPECT_THAT(after->snapshot()->FindTenant("acme")->tokens, SizeIs(1));
  EXPECT_TRUE(absl::IsFailedPrecondition(
      testing::OpenKeystore(*store_, old_kek, /*create=*/false).status()));
  // Writes go on under the new KEK.
  ASSERT_TRUE((*changed)->tenants().CreateTenant("beta").ok());
  EXPECT_NE(OpenOrDie(/*create=*/false)->snapshot()->FindTenant("beta"), nullptr);
}

TEST_P(KeystoreTest, FailedChangesCommitNothing) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
  const uint64_t generation = ks->snapshot()->generation();
  EXPECT_FALSE(ks->tenants().CreateTenant("acme").ok());
  EXPECT_FALSE(ks->tenants().CreateTenant("Bad").ok());
  EXPECT_FALSE(ks->keys().RotateKey("acme", "missing").ok());
  ASSERT_TRUE(ks->Refresh().ok());
  EXPECT_EQ(ks->snapshot()->generation(), generation);
  ASSERT_TRUE(ks->keys().CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  EXPECT_GT(ks->snapshot()->generation(), generation);
}

TEST_P(KeystoreTest, AnotherInstanceSeesChangesAfterRefresh) {
  auto a = OpenOrDie();
  auto b = OpenOrDie(/*create=*/false);
  ASSERT_TRUE(a->tenants().CreateTenant("acme").ok());
  ASSERT_TRUE(b->Refresh().ok());
  EXPECT_NE(b->snapshot()->FindTenant("acme"), nullptr);
  auto unchanged = b->snapshot();
  ASSERT_TRUE(b->Refresh().ok());
  EXPECT_EQ(b->snapshot(), unchanged);  // nothing changed: same snapshot

  // A change through b starts from the store, not from b's memory ...
  ASSERT_TRUE(a->tenants().CreateTenant("beta").ok());
  ASSERT_TRUE(b->tenants().CreateTenant("gamma").ok());
  ASSERT_TRUE(b->Refresh().ok());
  EXPECT_NE(b->snapshot()->FindTenant("beta"), nullptr);
  // ... and a sees it after a refresh.
  ASSERT_TRUE(a->Refresh().ok());
  EXPECT_NE(a->snapshot()->FindTenant("gamma"), nullptr);
  EXPECT_EQ(a->snapshot()->generation(), b->snapshot()->generation());
}

TEST_P(KeystoreTest, SealingEpochsAreReusedOnlyWhileTheKeyIsUnchanged) {
  auto a = OpenOrDie();
  ASSERT_TRUE(a->tenants().CreateTenant("acme").ok());
  ASSERT_TRUE(a->keys().CreateKey("acme", "one", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(a->keys().CreateKey("acme", "two", KeyAlgorithm::kAes256Gcm).ok());
  auto one = a->snapshot()->FindKey("acme", "one")->sealing;
  auto two = a->snapshot()->FindKey("acme", "two")->sealing;
  ASSERT_TRUE(a->keys().RotateKey("acme", "two").ok());
  EXPECT_EQ(a->snapshot()->FindKey("acme", "one")->sealing, one);
  EXPECT_NE(a->snapshot()->FindKey("acme", "two")->sealing, two);

  // The tenant is deleted and made again elsewhere: same names, same version 1,
  // other material. b must not keep sealing under the old material.
  auto b = OpenOrDie(/*create=*/false);
  auto b_one = b->snapshot()->FindKey("acme", "one")->sealing;
  ASSERT_TRUE(a->tenants().DeleteTenant("acme").ok());
  ASSERT_TRUE(a->tenants().CreateTenant("acme").ok());
  ASSERT_TRUE(a->keys().CreateKey("acme", "one", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(b->Refresh().ok());
  const KeyEntry* b_key = b->snapshot()->FindKey("acme", "one");
  ASSERT_NE(b_key, nullptr);
  EXPECT_NE(b_key->sealing, b_one);
  const std::vector<uint8_t> plaintext = {1, 2, 3};
  auto epoch = b_key->sealing->Current();
  ASSERT_TRUE(epoch.ok());
  auto sealed = (*epoch)->Seal(plaintext, {});
  ASSERT_TRUE(sealed.ok());
  const KeyEntry* a_key = a->snapshot()->FindKey("acme", "one");
  auto opener = crypto::EpochSubkey::Derive(a_key->versions.at(1).material->span(),
                                            {"acme", "one", 1}, (*epoch)->epoch_id());
  ASSERT_TRUE(opener.ok());
  auto opened = (*opener)->Open(*sealed, {});
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(*opened, plaintext);
}

TEST_P(KeystoreTest, IdleSweepsDropOnlyEpochsNotUsedForAWholePeriod) {
  auto a = OpenOrDie();
  ASSERT_TRUE(a->tenants().CreateTenant("acme").ok());
  ASSERT_TRUE(a->keys().CreateKey("acme", "busy", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(a->keys().CreateKey("acme", "idle", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(a->keys().CreateKey("acme", "cold", KeyAlgorithm::kAes256Gcm).ok());
  std::shared_ptr<const Snapshot> snapshot = a->snapshot();
  const KeyEntry* busy = snapshot->FindKey("acme", "busy");
  const KeyEntry* idle = snapshot->FindKey("acme", "idle");
  ASSERT_TRUE(busy->sealing->Current().ok());
  auto idle_epoch = idle->sealing->Current();
  ASSERT_TRUE(idle_epoch.ok());
  EXPECT_EQ(a->epochs().DropIdle(), 0u);  // both used in this period
  ASSERT_TRUE(busy->sealing->Current().ok());
  EXPECT_EQ(a->epochs().DropIdle(), 1u);  // "idle" was not
  EXPECT_TRUE(busy->sealing->warm());
  EXPECT_FALSE(idle->sealing->warm());
  EXPECT_FALSE(snapshot->FindKey("acme", "cold")->sealing->warm());
  // A later snapshot keeps the same (now cold) sealing epoch, and its next Seal
  // derives a new one that opens what it seals.
  ASSERT_TRUE(a->keys().CreateKey("acme", "another", KeyAlgorithm::kAes256Gcm).ok());
  const KeyEntry* again = a->snapshot()->FindKey("acme", "idle");
  EXPECT_EQ(again->sealing, idle->sealing);
  auto fresh = again->sealing->Current();
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE((*fresh)->epoch_id(), (*idle_epoch)->epoch_id());
  const std::vector<uint8_t> plaintext = {1, 2, 3};
  auto sealed = (*fresh)->Seal(plaintext, {});
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(*(*fresh)->Open(*sealed, {}), plaintext);
}

TEST_P(KeystoreTest, ConcurrentChangesFromTwoInstancesAreAllKept) {
  auto a = OpenOrDie();
  auto b = OpenOrDie(/*create=*/false);
  auto create = [](Keystore* ks, const char* prefix) {
    for (int i = 0; i < 20; ++i) {
      absl::Status s = ks->tenants().CreateTenant(absl::StrCat(prefix, i)).status();
      EXPECT_TRUE(s.ok()) << s;
    }
  };
  std::thread ta(create, a.get(), "a"), tb(create, b.get(), "b");
  // A third writer shares instance a, and a reader refreshes meanwhile.
  std::thread tc(create, a.get(), "c");
  std::thread reader([&] {
    for (int i = 0; i < 50; ++i) EXPECT_TRUE(b->Refresh().ok());
  });
  ta.join();
  tb.join();
  tc.join();
  reader.join();
  ASSERT_TRUE(a->Refresh().ok());
  ASSERT_TRUE(b->Refresh().ok());
  EXPECT_THAT(a->snapshot()->tenants(), SizeIs(60));
  EXPECT_THAT(b->snapshot()->tenants(), SizeIs(60));
  EXPECT_EQ(a->snapshot()->generation(), b->snapshot()->generation());
}

// Racing rotations of one key through two instances: each OK is one new version,
// none is lost and no version number is given twice.

INSTANTIATE_TEST_SUITE_P(Backends, KeystoreTest, ::testing::ValuesIn(testing::AllBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sealbox::server
