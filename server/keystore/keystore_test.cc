// The keystore's logic, run over every backend (testing/test_store.h): the same
// suite for the file and for etcd. Backend details (file modes, damaged files, etcd
// layout and watch) are tested beside each backend.
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
#include "server/keystore/names.h"
#include "server/keystore/testing/test_store.h"
#include "server/keystore/tokens.h"

namespace sealbox::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RandomKek;
using ::testing::SizeIs;

// Importable material: `size` bytes counting up from `first` (one byte repeated is
// refused).
std::vector<uint8_t> Material(size_t size, uint8_t first) {
  std::vector<uint8_t> material(size);
  for (size_t i = 0; i < size; ++i) material[i] = static_cast<uint8_t>(first + i);
  return material;
}

class KeystoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    store_ = testing::NewTestStore(GetParam());
    ASSERT_NE(store_, nullptr) << GetParam();
  }

  std::unique_ptr<Keystore> OpenOrDie(bool create = true) {
    auto keystore = testing::OpenKeystore(*store_, kek_, create);
    EXPECT_TRUE(keystore.ok()) << keystore.status();
    return keystore.ok() ? std::move(*keystore) : nullptr;
  }

  std::unique_ptr<testing::TestStore> store_;
  Kek kek_ = RandomKek();
};

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
    ASSERT_TRUE(ks->CreateTenant("acme").ok());
    ASSERT_TRUE(ks->CreateKey("acme", "db", KeyAlgorithm::kAes128Gcm).ok());
    ASSERT_TRUE(ks->RotateKey("acme", "db").ok());
    ASSERT_TRUE(ks->ImportKey("acme", "byok", material).ok());
    auto issued = ks->IssueToken("acme", "billing");
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
  ASSERT_TRUE(OpenOrDie()->CreateTenant("acme").ok());
  auto ks = testing::OpenKeystore(*store_, RandomKek(), /*create=*/true);
  EXPECT_TRUE(absl::IsFailedPrecondition(ks.status())) << ks.status();
  EXPECT_THAT(ks.status().message(), HasSubstr("was written with a different KEK"));
  // And it changed nothing: the right KEK still opens it.
  EXPECT_NE(OpenOrDie(/*create=*/false)->snapshot()->FindTenant("acme"), nullptr);
}

TEST_P(KeystoreTest, ChangingTheKekRewrapsUnderTheNewOneAtOpen) {
  {
    auto old = OpenOrDie();
    ASSERT_TRUE(old->CreateTenant("acme").ok());
    ASSERT_TRUE(old->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
    ASSERT_TRUE(old->IssueToken("acme", "t").ok());
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
  ASSERT_TRUE((*changed)->CreateTenant("beta").ok());
  EXPECT_NE(OpenOrDie(/*create=*/false)->snapshot()->FindTenant("beta"), nullptr);
}

TEST_P(KeystoreTest, Tenants) {
  auto ks = OpenOrDie();
  for (const char* name : {"a", "acme", "a-b_9", "z0123456789"}) {
    EXPECT_TRUE(ks->CreateTenant(name).ok()) << name;
  }
  for (const std::string& name :
       {std::string(), std::string("9a"), std::string("Acme"), std::string("a b"),
        std::string("a.b"), std::string("_a"), std::string(65, 'a')}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ks->CreateTenant(name).status())) << name;
  }
  EXPECT_TRUE(ks->CreateTenant(std::string(64, 'a')).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(ks->CreateTenant("acme").status()));
  EXPECT_THAT(*ks->ListTenants(), SizeIs(5));

  ASSERT_TRUE(ks->CreateKey("acme", "k", KeyAlgorithm::kUnspecified).ok());
  auto token = ks->IssueToken("acme", "");
  ASSERT_TRUE(token.ok());
  EXPECT_TRUE(ks->DeleteTenant("acme").ok());
  EXPECT_TRUE(absl::IsNotFound(ks->DeleteTenant("acme")));
  EXPECT_EQ(ks->snapshot()->FindTenant("acme"), nullptr);
  EXPECT_TRUE(absl::IsNotFound(ks->snapshot()->TenantForToken(token->token).status()));
  EXPECT_THAT(*ks->ListTenants(), SizeIs(4));
  // A tenant of the same name starts empty.
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  EXPECT_TRUE(absl::IsNotFound(ks->GetKey("acme", "k").status()));
}

TEST_P(KeystoreTest, TokensAuthenticateUntilRevoked) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  ASSERT_TRUE(ks->CreateTenant("other").ok());
  auto first = ks->IssueToken("acme", "billing");
  auto second = ks->IssueToken("acme", "reports");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_THAT(first->token, ::testing::StartsWith("sbx_"));
  EXPECT_THAT(first->token, SizeIs(4 + 43));
  EXPECT_THAT(first->info.id, ::testing::MatchesRegex("[0-9a-f]{16}"));
  EXPECT_NE(first->token, second->token);

  auto snap = ks->snapshot();
  EXPECT_EQ(*snap->TenantForToken(first->token), "acme");
  EXPECT_EQ(*snap->TenantForToken(second->token), "acme");
  EXPECT_TRUE(absl::IsNotFound(snap->TenantForToken("sbx_nope").status()));
  EXPECT_TRUE(absl::IsNotFound(snap->TenantForToken("").status()));

  ASSERT_TRUE(ks->RevokeToken("acme", first->info.id).ok());
  EXPECT_TRUE(absl::IsNotFound(ks->snapshot()->TenantForToken(first->token).status()));
  EXPECT_EQ(*ks->snapshot()->TenantForToken(second->token), "acme");
  // The old snapshot is immutable: a reader that holds it keeps its view.
  EXPECT_TRUE(snap->TenantForToken(first->token).ok());

  absl::Status again = ks->RevokeToken("acme", first->info.id);
  EXPECT_TRUE(absl::IsNotFound(again));
  // Someone pastes the token itself as the id: it must not show up in the error.
  absl::Status pasted = ks->RevokeToken("other", second->token);
  EXPECT_TRUE(absl::IsNotFound(pasted));
  EXPECT_THAT(pasted.message(), Not(HasSubstr(second->token)));
  EXPECT_TRUE(absl::IsNotFound(ks->IssueToken("nobody", "").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ks->IssueToken("acme", std::string(257, 'x')).status()));
}

TEST_P(KeystoreTest, ScopedExpiringTokensAreStoredAndRenewed) {
  std::string token, id;
  {
    auto ks = OpenOrDie();
    ASSERT_TRUE(ks->CreateTenant("acme").ok());
    TokenRequest request{
        "orders service", {{Operation::kSeal}, {"orders-*"}}, absl::Hours(1), absl::Hours(24)};
    auto issued = ks->IssueToken("acme", request);
    ASSERT_TRUE(issued.ok()) << issued.status();
    token = issued->token;
    id = issued->info.id;
    EXPECT_EQ(issued->info.scope.keys, std::vector<std::string>{"orders-*"});
    EXPECT_EQ(issued->info.expire_time - issued->info.create_time, absl::Hours(1));
    EXPECT_EQ(issued->info.max_expire_time - issued->info.create_time, absl::Hours(24));
  }
  // Reopened: what the token grants comes back from the store.
  auto ks = OpenOrDie(/*create=*/false);
  auto grant = ks->snapshot()->TokenFor(token);
  ASSERT_TRUE(grant.ok()) << grant.status();
  EXPECT_EQ((*grant)->tenant, "acme");
  EXPECT_EQ((*grant)->id, id);
  EXPECT_LT((*grant)->expire_time, absl::Now() + absl::Hours(1) + absl::Seconds(5));
  EXPECT_TRUE((*grant)->access.Check(Operation::kSeal, "orders-7").ok());
  EXPECT_TRUE(absl::IsPermissionDenied((*grant)->access.Check(Operation::kOpen, "orders-7")));
  const TokenInfo listed = ks->ListTenants()->at(0).tokens.at(0);
  EXPECT_EQ(listed.description, "orders service");
  EXPECT_EQ(listed.scope.operations, std::vector<Operation>{Operation::kSeal});

  // A successor: same scope and description, a fresh expiry within the maximum.
  auto renewed = ks->RenewToken("acme", id, absl::ZeroDuration());
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_NE(renewed->token, token);
  EXPECT_EQ(renewed->info.renewed_from, id);
  EXPECT_EQ(renewed->info.description, "orders service");
  EXPECT_EQ(renewed->info.scope.keys, std::vector<std::string>{"orders-*"});
  EXPECT_EQ(renewed->info.max_expire_time, listed.max_expire_time);
  auto successor = ks->snapshot()->TokenFor(renewed->token);
  ASSERT_TRUE(successor.ok());
  EXPECT_TRUE(absl::IsPermissionDenied((*successor)->access.Check(Operation::kSeal, "payments")));
  EXPECT_TRUE(ks->snapshot()->TokenFor(token).ok()) << "the old token lives to its expiry";

  // A renewal asking beyond the maximum gets the maximum, and then no more.
  auto longest = ks->RenewToken("acme", renewed->info.id, absl::Hours(1000));
  ASSERT_TRUE(longest.ok()) << longest.status();
  EXPECT_EQ(longest->info.expire_time, listed.max_expire_time);
  absl::Status beyond = ks->RenewToken("acme", longest->info.id, absl::ZeroDuration()).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(beyond)) << beyond;
  EXPECT_THAT(beyond.message(), HasSubstr("max_expire_time"));

  // Tokens without expiry have nothing to renew; revoked ones are gone.
  auto forever = ks->IssueToken("acme", "forever");
  ASSERT_TRUE(forever.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(
      ks->RenewToken("acme", forever->info.id, absl::ZeroDuration()).status()));
  ASSERT_TRUE(ks->RevokeToken("acme", id).ok());
  EXPECT_TRUE(absl::IsNotFound(ks->RenewToken("acme", id, absl::ZeroDuration()).status()));
}

TEST_P(KeystoreTest, AdminTokensLiveInTheKeystore) {
  auto ks = OpenOrDie();
  EXPECT_THAT(ks->ListAdminTokens(), SizeIs(0));
  const std::string bootstrap = TokenSha256("the configured admin token");
  // Nothing to fall back on yet: the bootstrap token cannot be retired.
  EXPECT_TRUE(absl::IsFailedPrecondition(ks->RetireBootstrapAdminToken(bootstrap)));
  auto reader = ks->IssueAdminToken({"dashboard", {}, absl::Hours(1), {}}, /*read_only=*/true);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE(absl::IsFailedPrecondition(ks->RetireBootstrapAdminToken(bootstrap)))
      << "a read-only token cannot take over";
  auto ops = ks->IssueAdminToken({"ops", {}, {}, {}}, /*read_only=*/false);
  ASSERT_TRUE(ops.ok()) << ops.status();

  auto grant = ks->snapshot()->TokenFor(ops->token);
  ASSERT_TRUE(grant.ok());
  EXPECT_EQ((*grant)->tenant, kAdminTokensTenant);
  EXPECT_FALSE((*grant)->read_only);
  EXPECT_TRUE((*ks->snapshot()->TokenFor(reader->token))->read_only);
  // The reserved tenant is not a tenant.
  EXPECT_THAT(*ks->ListTenants(), SizeIs(0));
  EXPECT_THAT(ks->ListAdminTokens(), SizeIs(2));

  ASSERT_TRUE(ks->RetireBootstrapAdminToken(bootstrap).ok());
  ASSERT_TRUE(ks->RetireBootstrapAdminToken(bootstrap).ok()) << "retiring again changes nothing";
  auto retired = ks->snapshot()->TokenForSha256(bootstrap);
  ASSERT_TRUE(retired.ok());
  EXPECT_TRUE((*retired)->retired);
  EXPECT_THAT(ks->ListAdminTokens(), SizeIs(2)) << "the retirement is not a token";
  EXPECT_TRUE(absl::IsNotFound(ks->RevokeAdminToken(
      absl::StrCat("bootstrap-", absl::BytesToHexString(bootstrap.substr(0, 8))))));

  ASSERT_TRUE(ks->RevokeAdminToken(reader->info.id).ok());
  EXPECT_TRUE(absl::IsNotFound(ks->snapshot()->TokenFor(reader->token).status()));
  EXPECT_TRUE(absl::IsNotFound(ks->RevokeAdminToken(reader->info.id)));
  // Tenant calls cannot reach the reserved tenant.
  EXPECT_TRUE(absl::IsInvalidArgument(ks->RevokeToken("_admin", ops->info.id)));
  EXPECT_TRUE(absl::IsInvalidArgument(ks->DeleteTenant("_admin")));
  EXPECT_TRUE(absl::IsInvalidArgument(ks->IssueToken("_admin", "x").status()));
}

TEST_P(KeystoreTest, RotationPeriodsAreCheckedAndShown) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  ASSERT_TRUE(ks->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  EXPECT_TRUE(
      absl::IsInvalidArgument(ks->SetRotationPeriod("acme", "k", absl::Minutes(59)).status()))
      << "below the minimum (1 hour by default)";
  EXPECT_TRUE(
      absl::IsInvalidArgument(ks->SetRotationPeriod("acme", "k", -absl::Hours(2)).status()));
  EXPECT_TRUE(absl::IsNotFound(ks->SetRotationPeriod("acme", "nope", absl::Hours(2)).status()));
  auto key = ks->SetRotationPeriod("acme", "k", absl::Hours(24 * 30));
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->rotation_period, absl::Hours(24 * 30));
  EXPECT_LE(key->primary_create_time, absl::Now());
  // Not due for a month.
  EXPECT_THAT(ks->RotateDueKeys(absl::Now()), SizeIs(0));
  EXPECT_EQ(ks->GetKey("acme", "k")->primary_version, 1u);
  EXPECT_EQ(ks->SetRotationPeriod("acme", "k", absl::ZeroDuration())->rotation_period,
            absl::ZeroDuration());
  EXPECT_EQ(ks->RotationCheckInterval(), absl::Minutes(1))
      << "a tenth of an hour, at most a minute";
}

// Three replicas of one store checking at once, with a 2 s period: every rotation
// happens once (no two versions less than a period apart), and none is missed.
TEST_P(KeystoreTest, ReplicasRotateOncePerPeriod) {
  std::vector<std::unique_ptr<Keystore>> replicas;
  for (int i = 0; i < 3; ++i) {
    auto ks = testing::OpenKeystore(*store_, kek_, /*create=*/true, nullptr, absl::Seconds(1));
    ASSERT_TRUE(ks.ok()) << ks.status();
    replicas.push_back(*std::move(ks));
  }
  ASSERT_TRUE(replicas[0]->CreateTenant("acme").ok());
  ASSERT_TRUE(replicas[0]->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(replicas[0]->SetRotationPeriod("acme", "k", absl::Seconds(2)).ok());
  const absl::Time start = absl::Now();
  std::atomic<int> rotations{0};
  std::vector<std::thread> threads;
  for (auto& replica : replicas) {
    threads.emplace_back([&, ks = replica.get()] {
      while (absl::Now() < start + absl::Seconds(7)) {
        ASSERT_TRUE(ks->Refresh().ok());
        rotations += static_cast<int>(ks->RotateDueKeys(absl::Now()).size());
        absl::SleepFor(absl::Milliseconds(50));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(replicas[0]->Refresh().ok());
  auto key = replicas[0]->GetKey("acme", "k");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(static_cast<int>(key->versions.size()), 1 + rotations.load());
  // Created in whole seconds: each version at least a period after the one before.
  for (size_t i = 1; i < key->versions.size(); ++i) {
    EXPECT_GE(key->versions[i].create_time - key->versions[i - 1].create_time, absl::Seconds(2))
        << "v" << key->versions[i].version;
  }
  // 7 s at one rotation per 2 s: 3, or 2 when the key was made late in a second.
  EXPECT_GE(rotations.load(), 2);
  EXPECT_LE(rotations.load(), 3);
}

// A week after expiry a token's record goes (tenant and admin alike); tokens without
// expiry, and ones expired more recently, stay listed.
TEST_P(KeystoreTest, LongExpiredTokensAreDeleted) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  auto short_lived = ks->IssueToken("acme", {"hourly", {}, absl::Hours(1), {}});
  auto lasting = ks->IssueToken("acme", std::string("lasting"));
  auto weekly = ks->IssueToken("acme", {"weekly", {}, absl::Hours(24 * 30), {}});
  auto admin = ks->IssueAdminToken({"ops", {}, absl::Hours(1), {}}, /*read_only=*/false);
  ASSERT_TRUE(short_lived.ok() && lasting.ok() && weekly.ok() && admin.ok());
  auto listed = [&](const std::string& tenant) {
    std::vector<std::string> ids;
    for (const TokenInfo& token : ks->snapshot()->FindTenant(tenant)->tokens) {
      ids.push_back(token.id);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  auto sorted = [](std::initializer_list<std::string> list) {
    std::vector<std::string> ids(list);
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  const absl::Time now = absl::Now();
  // Expired, but not for a week yet: kept.
  EXPECT_EQ(ks->DeleteExpiredTokens(now + absl::Hours(2)), 0);
  EXPECT_EQ(listed("acme"), sorted({short_lived->info.id, lasting->info.id, weekly->info.id}));
  // A week and an hour on: the hourly tenant token and the admin token go.
  EXPECT_EQ(ks->DeleteExpiredTokens(now + absl::Hours(7 * 24 + 2)), 2);
  EXPECT_EQ(listed("acme"), sorted({lasting->info.id, weekly->info.id}));
  EXPECT_TRUE(listed(std::string(kAdminTokensTenant)).empty());
  // Another replica (a second keystore on the same store) finds nothing left to do.
  auto replica = OpenOrDie(/*create=*/false);
  EXPECT_EQ(replica->DeleteExpiredTokens(now + absl::Hours(7 * 24 + 2)), 0);
  // Reopened: the deletions were stored.
  ks.reset();
  replica.reset();
  ks = OpenOrDie(/*create=*/false);
  EXPECT_EQ(listed("acme"), sorted({lasting->info.id, weekly->info.id}));
}

TEST_P(KeystoreTest, BadTokenRequestsAreRefused) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  for (const TokenRequest& request : std::vector<TokenRequest>{
           {"", {{static_cast<Operation>(7)}, {}}, {}, {}},
           {"", {{}, {"a*b"}}, {}, {}},
           {"", {}, absl::Seconds(-1), {}},
           {"", {}, {}, absl::Hours(1)},              // max_ttl without ttl
           {"", {}, absl::Hours(2), absl::Hours(1)},  // max_ttl below ttl
           {"", {}, absl::InfiniteDuration(), {}},
       }) {
    auto issued = ks->IssueToken("acme", request);
    EXPECT_TRUE(absl::IsInvalidArgument(issued.status())) << issued.status();
  }
  EXPECT_THAT(ks->ListTenants()->at(0).tokens, SizeIs(0));
}

TEST_P(KeystoreTest, CreateKey) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  auto key = ks->CreateKey("acme", "Orders.v2_x-y", KeyAlgorithm::kUnspecified);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->tenant, "acme");
  EXPECT_EQ(key->algorithm, KeyAlgorithm::kAes256Gcm);
  EXPECT_EQ(key->primary_version, 1u);
  EXPECT_EQ(key->min_decryption_version, 1u);
  ASSERT_THAT(key->versions, SizeIs(1));
  EXPECT_EQ(key->versions[0].state, VersionState::kEnabled);
  EXPECT_FALSE(key->versions[0].imported);

  const KeyEntry* entry = ks->snapshot()->FindKey("acme", "Orders.v2_x-y");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->versions.at(1).material->size(), 32u);
  ASSERT_NE(entry->sealing, nullptr);
  EXPECT_EQ(entry->sealing->version(), 1u);

  EXPECT_EQ(ks->CreateKey("acme", "small", KeyAlgorithm::kAes128Gcm)->algorithm,
            KeyAlgorithm::kAes128Gcm);
  EXPECT_EQ(ks->snapshot()->FindKey("acme", "small")->versions.at(1).material->size(), 16u);
  EXPECT_TRUE(
      absl::IsAlreadyExists(ks->CreateKey("acme", "small", KeyAlgorithm::kAes128Gcm).status()));
  EXPECT_TRUE(absl::IsNotFound(ks->CreateKey("nobody", "k", KeyAlgorithm::kAes128Gcm).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(ks->CreateKey("acme", "k", static_cast<KeyAlgorithm>(7)).status()));
  for (const std::string& name :
       {std::string(), std::string("a/b"), std::string("a b"), std::string(65, 'k')}) {
    EXPECT_TRUE(
        absl::IsInvalidArgument(ks->CreateKey("acme", name, KeyAlgorithm::kAes128Gcm).status()))
        << name;
  }
  EXPECT_TRUE(ks->CreateKey("acme", std::string(64, 'k'), KeyAlgorithm::kAes128Gcm).ok());

  auto keys = ks->ListKeys("acme");
  ASSERT_TRUE(keys.ok());
  EXPECT_THAT(*keys, SizeIs(3));
  EXPECT_TRUE(absl::IsNotFound(ks->ListKeys("nobody").status()));
  EXPECT_TRUE(absl::IsNotFound(ks->GetKey("acme", "missing").status()));
  EXPECT_EQ(ks->GetKey("acme", "small")->name, "small");
}

TEST_P(KeystoreTest, RotationKeepsOldVersions) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  ASSERT_TRUE(ks->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(ks->RotateKey("acme", "k").ok());
  auto key = ks->RotateKey("acme", "k");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->primary_version, 3u);
  EXPECT_THAT(key->versions, SizeIs(3));
  const KeyEntry* entry = ks->snapshot()->FindKey("acme", "k");
  EXPECT_EQ(entry->sealing->version(), 3u);
  for (uint32_t v : {1u, 2u, 3u}) EXPECT_TRUE(entry->VersionForOpen(v).ok()) << v;
  EXPECT_TRUE(absl::IsNotFound(entry->VersionForOpen(4).status()));
  EXPECT_FALSE(std::equal(entry->versions.at(1).material->span().begin(),
                          entry->versions.at(1).material->span().end(),
                          entry->versions.at(2).material->span().begin()));
  EXPECT_TRUE(absl::IsNotFound(ks->RotateKey("acme", "nope").status()));
}

TEST_P(KeystoreTest, ImportKey) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  std::vector<uint8_t> aes128 = Material(16, 0xab), aes256 = Material(32, 0xcd);
  auto key = ks->ImportKey("acme", "byok", aes128);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->algorithm, KeyAlgorithm::kAes128Gcm);
  EXPECT_TRUE(key->versions[0].imported);

  absl::Status mismatch = ks->ImportKey("acme", "byok", aes256).status();
  EXPECT_TRUE(absl::IsInvalidArgument(mismatch));
  const std::string hex = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(aes256.data()), aes256.size()));
  EXPECT_THAT(mismatch.message(), Not(HasSubstr(hex.substr(0, 8))));
  EXPECT_THAT(mismatch.message(), Not(HasSubstr("\xcd\xce")));

  key = ks->ImportKey("acme", "byok", Material(16, 0x01));
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->primary_version, 2u);
  EXPECT_TRUE(
      absl::IsInvalidArgument(ks->ImportKey("acme", "x", std::vector<uint8_t>(24, 0)).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ks->ImportKey("acme", "x", {}).status()));
  EXPECT_TRUE(absl::IsNotFound(ks->ImportKey("nobody", "x", aes256).status()));
  // All zeros, and any other byte repeated, is a mistake rather than a key: refused,
  // for a new key and for a new version alike, without saying which byte.
  const std::string weak_message =
      "key material is one byte repeated (such as all zeros); import random bytes";
  for (size_t size : {16, 32}) {
    for (uint8_t fill : {0x00, 0xff, 0x5a}) {
      absl::Status weak = ks->ImportKey("acme", "weak", std::vector<uint8_t>(size, fill)).status();
      EXPECT_TRUE(absl::IsInvalidArgument(weak)) << weak;
      EXPECT_EQ(weak.message(), weak_message);
    }
  }
  EXPECT_EQ(ks->ImportKey("acme", "byok", std::vector<uint8_t>(16, 0)).status().message(),
            weak_message);
  EXPECT_TRUE(absl::IsNotFound(ks->GetKey("acme", "weak").status()));
  EXPECT_EQ(ks->GetKey("acme", "byok")->primary_version, 2u);
  // An existing key made by CreateKey takes imported material as its new primary.
  ASSERT_TRUE(ks->CreateKey("acme", "made", KeyAlgorithm::kAes256Gcm).ok());
  key = ks->ImportKey("acme", "made", aes256);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->primary_version, 2u);
  EXPECT_FALSE(key->versions[0].imported);
  EXPECT_TRUE(key->versions[1].imported);
}

TEST_P(KeystoreTest, VersionStatesAndDestruction) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  ASSERT_TRUE(ks->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  absl::Status s = ks->SetVersionState("acme", "k", 1, VersionState::kDisabled).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(s));
  EXPECT_THAT(s.message(), HasSubstr("rotate first"));
  s = ks->DestroyVersion("acme", "k", 1).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(s));
  EXPECT_THAT(s.message(), HasSubstr("rotate first"));

  ASSERT_TRUE(ks->RotateKey("acme", "k").ok());
  auto key = ks->SetVersionState("acme", "k", 1, VersionState::kDisabled);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->versions[0].state, VersionState::kDisabled);
  EXPECT_TRUE(
      absl::IsFailedPrecondition(ks->snapshot()->FindKey("acme", "k")->VersionForOpen(1).status()));
  ASSERT_TRUE(ks->SetVersionState("acme", "k", 1, VersionState::kEnabled).ok());
  EXPECT_TRUE(ks->snapshot()->FindKey("acme", "k")->VersionForOpen(1).ok());
  EXPECT_TRUE(ks->SetVersionState("acme", "k", 2, VersionState::kEnabled).ok());  // no-op
  EXPECT_TRUE(absl::IsInvalidArgument(
      ks->SetVersionState("acme", "k", 1, VersionState::kDestroyed).status()));
  EXPECT_TRUE(
      absl::IsNotFound(ks->SetVersionState("acme", "k", 9, VersionState::kEnabled).status()));

  key = ks->DestroyVersion("acme", "k", 1);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->versions[0].state, VersionState::kDestroyed);
  // Again: OK, the key as it is, and nothing written.
  ASSERT_TRUE(ks->Refresh().ok());
  const uint64_t generation = ks->snapshot()->generation();
  key = ks->DestroyVersion("acme", "k", 1);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->name, "k");
  EXPECT_EQ(key->primary_version, 2u);
  ASSERT_THAT(key->versions, SizeIs(2));
  EXPECT_EQ(key->versions[0].state, VersionState::kDestroyed);
  EXPECT_EQ(key->versions[1].state, VersionState::kEnabled);
  ASSERT_TRUE(ks->Refresh().ok());
  EXPECT_EQ(ks->snapshot()->generation(), generation);
  // Another replica sees the version destroyed, and destroying it there is OK too.
  auto other = OpenOrDie(/*create=*/false);
  EXPECT_TRUE(other->DestroyVersion("acme", "k", 1).ok());
  EXPECT_TRUE(absl::IsNotFound(ks->DestroyVersion("acme", "k", 9).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(
      ks->SetVersionState("acme", "k", 1, VersionState::kEnabled).status()));
  const KeyEntry* entry = ks->snapshot()->FindKey("acme", "k");
  EXPECT_EQ(entry->versions.at(1).material, nullptr);
  EXPECT_TRUE(absl::IsFailedPrecondition(entry->VersionForOpen(1).status()));

  // Destroyed stays destroyed on disk.
  auto reopened = OpenOrDie(/*create=*/false);
  entry = reopened->snapshot()->FindKey("acme", "k");
  EXPECT_EQ(entry->versions.at(1).state, VersionState::kDestroyed);
  EXPECT_EQ(entry->versions.at(1).material, nullptr);
  EXPECT_NE(entry->versions.at(2).material, nullptr);
}

// Each kind of error has one form, whichever call meets it: `tenant "acme" not found`,
// `key "acme/k" not found`, `key "acme/k" version 9 not found`, `... already exists`.
TEST_P(KeystoreTest, ErrorsHaveOneFormPerKind) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  ASSERT_TRUE(ks->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  auto message = [](const absl::Status& s) { return std::string(s.message()); };
  const std::vector<uint8_t> material = Material(16, 1);

  const std::string no_tenant = "tenant \"nobody\" not found";
  for (const absl::Status& s :
       {ks->DeleteTenant("nobody"), ks->IssueToken("nobody", "").status(),
        ks->RevokeToken("nobody", "0123456789abcdef"),
        ks->CreateKey("nobody", "k", KeyAlgorithm::kAes256Gcm).status(),
        ks->ImportKey("nobody", "k", material).status(), ks->RotateKey("nobody", "k").status(),
        ks->GetKey("nobody", "k").status(), ks->ListKeys("nobody").status(),
        ks->SetMinDecryptionVersion("nobody", "k", 1).status(),
        ks->SetVersionState("nobody", "k", 1, VersionState::kDisabled).status(),
        ks->DestroyVersion("nobody", "k", 1).status()}) {
    EXPECT_TRUE(absl::IsNotFound(s)) << s;
    EXPECT_EQ(message(s), no_tenant);
  }
  const std::string no_key = "key \"acme/missing\" not found";
  for (const absl::Status& s :
       {ks->RotateKey("acme", "missing").status(), ks->GetKey("acme", "missing").status(),
        ks->SetMinDecryptionVersion("acme", "missing", 1).status(),
        ks->SetVersionState("acme", "missing", 1, VersionState::kDisabled).status(),
        ks->DestroyVersion("acme", "missing", 1).status()}) {
    EXPECT_TRUE(absl::IsNotFound(s)) << s;
    EXPECT_EQ(message(s), no_key);
  }
  for (const absl::Status& s :
       {ks->SetVersionState("acme", "k", 9, VersionState::kEnabled).status(),
        ks->DestroyVersion("acme", "k", 9).status()}) {
    EXPECT_TRUE(absl::IsNotFound(s)) << s;
    EXPECT_EQ(message(s), "key \"acme/k\" version 9 not found");
  }
  EXPECT_EQ(message(ks->CreateTenant("acme").status()), "tenant \"acme\" already exists");
  EXPECT_EQ(message(ks->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).status()),
            "key \"acme/k\" already exists");
  EXPECT_EQ(message(ks->RevokeToken("acme", "0123456789abcdef")),
            "token with that id not found in tenant \"acme\"");
  EXPECT_EQ(message(ks->ImportKey("acme", "k", material).status()),
            "key \"acme/k\" is AES_256_GCM (32-byte material), not 16 bytes");
  EXPECT_EQ(message(ks->DestroyVersion("acme", "k", 1).status()),
            "key \"acme/k\" version 1 is the primary version; rotate first");
  EXPECT_EQ(message(ks->SetVersionState("acme", "k", 1, VersionState::kDisabled).status()),
            "key \"acme/k\" version 1 is the primary version; rotate first");
  EXPECT_EQ(message(ks->SetMinDecryptionVersion("acme", "k", 2).status()),
            "key \"acme/k\" minimum decryption version 2 would be above its primary "
            "version 1; rotate first");
  ASSERT_TRUE(ks->RotateKey("acme", "k").ok());
  ASSERT_TRUE(ks->DestroyVersion("acme", "k", 1).ok());
  EXPECT_EQ(message(ks->SetVersionState("acme", "k", 1, VersionState::kEnabled).status()),
            "key \"acme/k\" version 1 is destroyed");
  // What the data plane sees of a version (the tenant is the caller's own, unnamed).
  const KeyEntry* entry = ks->snapshot()->FindKey("acme", "k");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(message(entry->VersionForOpen(1).status()), "key \"k\" version 1 is destroyed");
  EXPECT_EQ(message(entry->VersionForOpen(7).status()), "key \"k\" version 7 not found");
}

TEST_P(KeystoreTest, MinDecryptionVersion) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  ASSERT_TRUE(ks->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(ks->RotateKey("acme", "k").ok());
  ASSERT_TRUE(ks->RotateKey("acme", "k").ok());
  auto key = ks->SetMinDecryptionVersion("acme", "k", 2);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->min_decryption_version, 2u);
  const KeyEntry* entry = ks->snapshot()->FindKey("acme", "k");
  EXPECT_TRUE(absl::IsFailedPrecondition(entry->VersionForOpen(1).status()));
  EXPECT_TRUE(entry->VersionForOpen(2).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(ks->SetMinDecryptionVersion("acme", "k", 4).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ks->SetMinDecryptionVersion("acme", "k", 0).status()));
  EXPECT_TRUE(ks->SetMinDecryptionVersion("acme", "k", 3).ok());
  EXPECT_TRUE(ks->SetMinDecryptionVersion("acme", "k", 1).ok());  // lowering is allowed
}

TEST_P(KeystoreTest, TrimKeyDeletesOnlyVersionsThatNoLongerOpen) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  ASSERT_TRUE(ks->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ks->RotateKey("acme", "k").ok());  // v1..v4
  auto message = [](const absl::Status& s) { return std::string(s.message()); };
  EXPECT_TRUE(absl::IsInvalidArgument(ks->TrimKey("acme", "k", 0).status()));
  EXPECT_EQ(message(ks->TrimKey("acme", "k", 2).status()),
            "key \"acme/k\" versions from 1 still open; trimming below 2 needs the "
            "minimum decryption version raised to it first");
  ASSERT_TRUE(ks->SetMinDecryptionVersion("acme", "k", 3).ok());
  const uint64_t before = ks->snapshot()->generation();
  auto trimmed = ks->TrimKey("acme", "k", 3);
  ASSERT_TRUE(trimmed.ok()) << trimmed.status();
  EXPECT_EQ(trimmed->min_available_version, 3u);
  ASSERT_EQ(trimmed->versions.size(), 2u);
  EXPECT_EQ(trimmed->versions[0].version, 3u);
  EXPECT_GT(ks->snapshot()->generation(), before);

  // Gone for good, also for a fresh instance reading the store; the rest still opens.
  auto fresh = OpenOrDie(/*create=*/false);
  for (Keystore* k : {ks.get(), fresh.get()}) {
    const KeyEntry* entry = k->snapshot()->FindKey("acme", "k");
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->versions.count(1) + entry->versions.count(2), 0u);
    EXPECT_EQ(message(entry->VersionForOpen(2).status()),
              "key \"k\" version 2 was trimmed (versions below 3 no longer exist)");
    // Version 0 never existed: a damaged header, not a trimmed version.
    EXPECT_TRUE(absl::IsNotFound(entry->VersionForOpen(0).status()));
    ASSERT_TRUE(entry->VersionForOpen(3).ok());
    EXPECT_FALSE((*entry->VersionForOpen(3))->material->span().empty());
  }
  // The minimum cannot go back below the trimmed ones; trimming again is a no-op.
  EXPECT_EQ(message(ks->SetMinDecryptionVersion("acme", "k", 2).status()),
            "key \"acme/k\" versions below 3 were trimmed; the minimum decryption "
            "version cannot go below it");
  const uint64_t after = ks->snapshot()->generation();
  EXPECT_TRUE(ks->TrimKey("acme", "k", 2).ok());
  EXPECT_TRUE(ks->TrimKey("acme", "k", 3).ok());
  EXPECT_EQ(ks->snapshot()->generation(), after);
  EXPECT_TRUE(absl::IsFailedPrecondition(ks->TrimKey("acme", "k", 4).status()));
}

TEST_P(KeystoreTest, FailedChangesCommitNothing) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->CreateTenant("acme").ok());
  const uint64_t generation = ks->snapshot()->generation();
  EXPECT_FALSE(ks->CreateTenant("acme").ok());
  EXPECT_FALSE(ks->CreateTenant("Bad").ok());
  EXPECT_FALSE(ks->RotateKey("acme", "missing").ok());
  ASSERT_TRUE(ks->Refresh().ok());
  EXPECT_EQ(ks->snapshot()->generation(), generation);
  ASSERT_TRUE(ks->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  EXPECT_GT(ks->snapshot()->generation(), generation);
}

TEST_P(KeystoreTest, AnotherInstanceSeesChangesAfterRefresh) {
  auto a = OpenOrDie();
  auto b = OpenOrDie(/*create=*/false);
  ASSERT_TRUE(a->CreateTenant("acme").ok());
  ASSERT_TRUE(b->Refresh().ok());
  EXPECT_NE(b->snapshot()->FindTenant("acme"), nullptr);
  auto unchanged = b->snapshot();
  ASSERT_TRUE(b->Refresh().ok());
  EXPECT_EQ(b->snapshot(), unchanged);  // nothing changed: same snapshot

  // A change through b starts from the store, not from b's memory ...
  ASSERT_TRUE(a->CreateTenant("beta").ok());
  ASSERT_TRUE(b->CreateTenant("gamma").ok());
  ASSERT_TRUE(b->Refresh().ok());
  EXPECT_NE(b->snapshot()->FindTenant("beta"), nullptr);
  // ... and a sees it after a refresh.
  ASSERT_TRUE(a->Refresh().ok());
  EXPECT_NE(a->snapshot()->FindTenant("gamma"), nullptr);
  EXPECT_EQ(a->snapshot()->generation(), b->snapshot()->generation());
}

TEST_P(KeystoreTest, SealingEpochsAreReusedOnlyWhileTheKeyIsUnchanged) {
  auto a = OpenOrDie();
  ASSERT_TRUE(a->CreateTenant("acme").ok());
  ASSERT_TRUE(a->CreateKey("acme", "one", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(a->CreateKey("acme", "two", KeyAlgorithm::kAes256Gcm).ok());
  auto one = a->snapshot()->FindKey("acme", "one")->sealing;
  auto two = a->snapshot()->FindKey("acme", "two")->sealing;
  ASSERT_TRUE(a->RotateKey("acme", "two").ok());
  EXPECT_EQ(a->snapshot()->FindKey("acme", "one")->sealing, one);
  EXPECT_NE(a->snapshot()->FindKey("acme", "two")->sealing, two);

  // The tenant is deleted and made again elsewhere: same names, same version 1,
  // other material. b must not keep sealing under the old material.
  auto b = OpenOrDie(/*create=*/false);
  auto b_one = b->snapshot()->FindKey("acme", "one")->sealing;
  ASSERT_TRUE(a->DeleteTenant("acme").ok());
  ASSERT_TRUE(a->CreateTenant("acme").ok());
  ASSERT_TRUE(a->CreateKey("acme", "one", KeyAlgorithm::kAes256Gcm).ok());
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
  ASSERT_TRUE(a->CreateTenant("acme").ok());
  ASSERT_TRUE(a->CreateKey("acme", "busy", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(a->CreateKey("acme", "idle", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(a->CreateKey("acme", "cold", KeyAlgorithm::kAes256Gcm).ok());
  std::shared_ptr<const Snapshot> snapshot = a->snapshot();
  const KeyEntry* busy = snapshot->FindKey("acme", "busy");
  const KeyEntry* idle = snapshot->FindKey("acme", "idle");
  ASSERT_TRUE(busy->sealing->Current().ok());
  auto idle_epoch = idle->sealing->Current();
  ASSERT_TRUE(idle_epoch.ok());
  EXPECT_EQ(DropIdleEpochs(*snapshot), 0u);  // both used in this period
  ASSERT_TRUE(busy->sealing->Current().ok());
  EXPECT_EQ(DropIdleEpochs(*snapshot), 1u);  // "idle" was not
  EXPECT_TRUE(busy->sealing->warm());
  EXPECT_FALSE(idle->sealing->warm());
  EXPECT_FALSE(snapshot->FindKey("acme", "cold")->sealing->warm());
  // A later snapshot keeps the same (now cold) sealing epoch, and its next Seal
  // derives a new one that opens what it seals.
  ASSERT_TRUE(a->CreateKey("acme", "another", KeyAlgorithm::kAes256Gcm).ok());
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
      absl::Status s = ks->CreateTenant(absl::StrCat(prefix, i)).status();
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
TEST_P(KeystoreTest, RacingRotationsOfOneKeyEachAddOneVersion) {
  auto a = OpenOrDie();
  auto b = OpenOrDie(/*create=*/false);
  ASSERT_TRUE(a->CreateTenant("acme").ok());
  ASSERT_TRUE(a->CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      Keystore* ks = t % 2 == 0 ? a.get() : b.get();
      for (int i = 0; i < 10; ++i) {
        absl::Status s = ks->RotateKey("acme", "k").status();
        if (s.ok()) {
          ++ok;
        } else {
          EXPECT_TRUE(absl::IsAborted(s)) << s;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_GT(ok.load(), 0);
  ASSERT_TRUE(a->Refresh().ok());
  const KeyEntry* key = a->snapshot()->FindKey("acme", "k");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->versions.size(), 1u + ok.load());
  EXPECT_EQ(key->primary_version, 1u + ok.load());
}

INSTANTIATE_TEST_SUITE_P(Backends, KeystoreTest, ::testing::ValuesIn(testing::AllBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sealbox::server
