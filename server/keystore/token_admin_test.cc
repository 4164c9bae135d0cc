// TokenAdmin: tenant and admin tokens issued, renewed, revoked and deleted once long expired; run
// over every backend (testing/test_store.h): the same suite for the file and for etcd. Backend
// details are tested beside each backend.
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

class TokenAdminTest : public testing::KeystoreFixture {};

TEST_P(TokenAdminTest, TokensAuthenticateUntilRevoked) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
  ASSERT_TRUE(ks->tenants().CreateTenant("other").ok());
  auto first = ks->tokens().IssueToken("acme", "billing");
  auto second = ks->tokens().IssueToken("acme", "reports");
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

  ASSERT_TRUE(ks->tokens().RevokeToken("acme", first->info.id).ok());
  EXPECT_TRUE(absl::IsNotFound(ks->snapshot()->TenantForToken(first->token).status()));
  EXPECT_EQ(*ks->snapshot()->TenantForToken(second->token), "acme");
  // The old snapshot is immutable: a reader that holds it keeps its view.
  EXPECT_TRUE(snap->TenantForToken(first->token).ok());

  absl::Status again = ks->tokens().RevokeToken("acme", first->info.id);
  EXPECT_TRUE(absl::IsNotFound(again));
  // Someone pastes the token itself as the id: it must not show up in the error.
  absl::Status pasted = ks->tokens().RevokeToken("other", second->token);
  EXPECT_TRUE(absl::IsNotFound(pasted));
  EXPECT_THAT(pasted.message(), Not(HasSubstr(second->token)));
  EXPECT_TRUE(absl::IsNotFound(ks->tokens().IssueToken("nobody", "").status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(ks->tokens().IssueToken("acme", std::string(257, 'x')).status()));
}

TEST_P(TokenAdminTest, ScopedExpiringTokensAreStoredAndRenewed) {
  std::string token, id;
  {
    auto ks = OpenOrDie();
    ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
    TokenRequest request{
        "orders service", {{Operation::kSeal}, {"orders-*"}}, absl::Hours(1), absl::Hours(24)};
    auto issued = ks->tokens().IssueToken("acme", request);
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
  const TokenInfo listed = ks->tenants().ListTenants()->at(0).tokens.at(0);
  EXPECT_EQ(listed.description, "orders service");
  EXPECT_EQ(listed.scope.operations, std::vector<Operation>{Operation::kSeal});

  // A successor: same scope and description, a fresh expiry within the maximum.
  auto renewed = ks->tokens().RenewToken("acme", id, absl::ZeroDuration());
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
  auto longest = ks->tokens().RenewToken("acme", renewed->info.id, absl::Hours(1000));
  ASSERT_TRUE(longest.ok()) << longest.status();
  EXPECT_EQ(longest->info.expire_time, listed.max_expire_time);
  absl::Status beyond =
      ks->tokens().RenewToken("acme", longest->info.id, absl::ZeroDuration()).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(beyond)) << beyond;
  EXPECT_THAT(beyond.message(), HasSubstr("max_expire_time"));

  // Tokens without expiry have nothing to renew; revoked ones are gone.
  auto forever = ks->tokens().IssueToken("acme", "forever");
  ASSERT_TRUE(forever.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(
      ks->tokens().RenewToken("acme", forever->info.id, absl::ZeroDuration()).status()));
  ASSERT_TRUE(ks->tokens().RevokeToken("acme", id).ok());
  EXPECT_TRUE(absl::IsNotFound(ks->tokens().RenewToken("acme", id, absl::ZeroDuration()).status()));
}

TEST_P(TokenAdminTest, AdminTokensLiveInTheKeystore) {
  auto ks = OpenOrDie();
  EXPECT_THAT(ks->tokens().ListAdminTokens(), SizeIs(0));
  const std::string bootstrap = TokenSha256("the configured admin token");
  // Nothing to fall back on yet: the bootstrap token cannot be retired.
  EXPECT_TRUE(absl::IsFailedPrecondition(ks->tokens().RetireBootstrapAdminToken(bootstrap)));
  auto reader =
      ks->tokens().IssueAdminToken({"dashboard", {}, absl::Hours(1), {}}, /*read_only=*/true);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE(absl::IsFailedPrecondition(ks->tokens().RetireBootstrapAdminToken(bootstrap)))
      << "a read-only token cannot take over";
  auto ops = ks->tokens().IssueAdminToken({"ops", {}, {}, {}}, /*read_only=*/false);
  ASSERT_TRUE(ops.ok()) << ops.status();

  auto grant = ks->snapshot()->TokenFor(ops->token);
  ASSERT_TRUE(grant.ok());
  EXPECT_EQ((*grant)->tenant, kAdminTokensTenant);
  EXPECT_FALSE((*grant)->read_only);
  EXPECT_TRUE((*ks->snapshot()->TokenFor(reader->token))->read_only);
  // The reserved tenant is not a tenant.
  EXPECT_THAT(*ks->tenants().ListTenants(), SizeIs(0));
  EXPECT_THAT(ks->tokens().ListAdminTokens(), SizeIs(2));

  ASSERT_TRUE(ks->tokens().RetireBootstrapAdminToken(bootstrap).ok());
  ASSERT_TRUE(ks->tokens().RetireBootstrapAdminToken(bootstrap).ok())
      << "retiring again changes nothing";
  auto retired = ks->snapshot()->TokenForSha256(bootstrap);
  ASSERT_TRUE(retired.ok());
  EXPECT_TRUE((*retired)->retired);
  EXPECT_THAT(ks->tokens().ListAdminTokens(), SizeIs(2)) << "the retirement is not a token";
  EXPECT_TRUE(absl::IsNotFound(ks->tokens().RevokeAdminToken(
      absl::StrCat("bootstrap-", absl::BytesToHexString(bootstrap.substr(0, 8))))));

  ASSERT_TRUE(ks->tokens().RevokeAdminToken(reader->info.id).ok());
  EXPECT_TRUE(absl::IsNotFound(ks->snapshot()->TokenFor(reader->token).status()));
  EXPECT_TRUE(absl::IsNotFound(ks->tokens().RevokeAdminToken(reader->info.id)));
  // Tenant calls cannot reach the reserved tenant.
  EXPECT_TRUE(absl::IsInvalidArgument(ks->tokens().RevokeToken("_admin", ops->info.id)));
  EXPECT_TRUE(absl::IsInvalidArgument(ks->tenants().DeleteTenant("_admin")));
  EXPECT_TRUE(absl::IsInvalidArgument(ks->tokens().IssueToken("_admin", "x").status()));
}

TEST_P(TokenAdminTest, LongExpiredTokensAreDeleted) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
  auto short_lived = ks->tokens().IssueToken("acme", {"hourly", {}, absl::Hours(1), {}});
  auto lasting = ks->tokens().IssueToken("acme", std::string("lasting"));
  auto weekly = ks->tokens().IssueToken("acme", {"weekly", {}, absl::Hours(24 * 30), {}});
  auto admin = ks->tokens().IssueAdminToken({"ops", {}, absl::Hours(1), {}}, /*read_only=*/false);
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
  EXPECT_EQ(ks->tokens().DeleteExpiredTokens(now + absl::Hours(2)), 0);
  EXPECT_EQ(listed("acme"), sorted({short_lived->info.id, lasting->info.id, weekly->info.id}));
  // A week and an hour on: the hourly tenant token and the admin token go.
  EXPECT_EQ(ks->tokens().DeleteExpiredTokens(now + absl::Hours(7 * 24 + 2)), 2);
  EXPECT_EQ(listed("acme"), sorted({lasting->info.id, weekly->info.id}));
  EXPECT_TRUE(listed(std::string(kAdminTokensTenant)).empty());
  // Another replica (a second keystore on the same store) finds nothing left to do.
  auto replica = OpenOrDie(/*create=*/false);
  EXPECT_EQ(replica->tokens().DeleteExpiredTokens(now + absl::Hours(7 * 24 + 2)), 0);
  // Reopened: the deletions were stored.
  ks.reset();
  replica.reset();
  ks = OpenOrDie(/*create=*/false);
  EXPECT_EQ(listed("acme"), sorted({lasting->info.id, weekly->info.id}));
}

TEST_P(TokenAdminTest, BadTokenRequestsAreRefused) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
  for (const TokenRequest& request : std::vector<TokenRequest>{
           {"", {{static_cast<Operation>(7)}, {}}, {}, {}},
           {"", {{}, {"a*b"}}, {}, {}},
           {"", {}, absl::Seconds(-1), {}},
           {"", {}, {}, absl::Hours(1)},              // max_ttl without ttl
           {"", {}, absl::Hours(2), absl::Hours(1)},  // max_ttl below ttl
           {"", {}, absl::InfiniteDuration(), {}},
       }) {
    auto issued = ks->tokens().IssueToken("acme", request);
    EXPECT_TRUE(absl::IsInvalidArgument(issued.status())) << issued.status();
  }
  EXPECT_THAT(ks->tenants().ListTenants()->at(0).tokens, SizeIs(0));
}

INSTANTIATE_TEST_SUITE_P(Backends, TokenAdminTest, ::testing::ValuesIn(testing::AllBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sealbox::server
