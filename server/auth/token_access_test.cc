#include "server/auth/token_access.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

using ::testing::HasSubstr;

TokenAccess AccessOrDie(const TokenScope& scope) {
  absl::StatusOr<TokenAccess> access = TokenAccess::Create(scope);
  EXPECT_TRUE(access.ok()) << access.status();
  return access.ok() ? *std::move(access) : TokenAccess();
}

TEST(TokenAccessTest, NoScopeAllowsEverything) {
  TokenAccess access = AccessOrDie({});
  for (Operation operation :
       {Operation::kSeal, Operation::kOpen, Operation::kRewrap, Operation::kGenerateDataKey}) {
    EXPECT_TRUE(access.Check(operation, "anything").ok());
  }
  EXPECT_TRUE(TokenAccess().Check(Operation::kOpen, "k").ok());
}

TEST(TokenAccessTest, SealOnAPrefix) {
  TokenAccess access = AccessOrDie({{Operation::kSeal}, {"orders-*", "invoices"}});
  EXPECT_TRUE(access.Check(Operation::kSeal, "orders-1").ok());
  EXPECT_TRUE(access.Check(Operation::kSeal, "orders-").ok());
  EXPECT_TRUE(access.Check(Operation::kSeal, "invoices").ok());

  absl::Status open = access.Check(Operation::kOpen, "orders-1");
  EXPECT_TRUE(absl::IsPermissionDenied(open));
  EXPECT_EQ(open.message(), "this token lacks the open permission (it has: seal)");

  absl::Status other = access.Check(Operation::kSeal, "payments");
  EXPECT_TRUE(absl::IsPermissionDenied(other));
  EXPECT_EQ(other.message(),
            "this token lacks permission for key \"payments\" (its keys: orders-*, invoices)");
  // An exact name is not a prefix; a prefix is matched from the start only.
  EXPECT_FALSE(access.Check(Operation::kSeal, "invoices2").ok());
  EXPECT_FALSE(access.Check(Operation::kSeal, "old-orders-1").ok());
  EXPECT_FALSE(access.Check(Operation::kSeal, "orders").ok());
}

TEST(TokenAccessTest, OperationsAreListedInAFixedOrder) {
  TokenAccess access = AccessOrDie({{Operation::kGenerateDataKey, Operation::kOpen}, {}});
  EXPECT_TRUE(access.Check(Operation::kOpen, "any").ok());
  EXPECT_TRUE(access.Check(Operation::kGenerateDataKey, "any").ok());
  EXPECT_EQ(access.Check(Operation::kRewrap, "any").message(),
            "this token lacks the rewrap permission (it has: open, datakey)");
}

TEST(TokenAccessTest, StarAloneIsEveryKey) {
  TokenAccess access = AccessOrDie({{Operation::kOpen}, {"*"}});
  EXPECT_TRUE(access.Check(Operation::kOpen, "whatever").ok());
}

TEST(TokenAccessTest, BadScopesAreRefused) {
  for (const TokenScope& scope : std::vector<TokenScope>{
           {{static_cast<Operation>(0)}, {}},
           {{static_cast<Operation>(9)}, {}},
           {{Operation::kSeal, Operation::kSeal}, {}},
           {{}, {""}},
           {{}, {"a*b"}},
           {{}, {"**"}},
           {{}, {"*x"}},
           {{}, {"has space*"}},
           {{}, {"slash/no"}},
           {{}, {std::string(65, 'k')}},
           {{}, {std::string(64, 'k') + "*"}},
           {{}, std::vector<std::string>(kMaxTokenKeyPatterns + 1, "k")},
       }) {
    absl::StatusOr<TokenAccess> access = TokenAccess::Create(scope);
    EXPECT_TRUE(absl::IsInvalidArgument(access.status())) << access.status();
  }
  EXPECT_THAT(TokenAccess::Create({{}, {"a*b"}}).status().message(), HasSubstr("orders-*"));
}

TEST(TokenAccessTest, NamesRoundTrip) {
  for (Operation operation :
       {Operation::kSeal, Operation::kOpen, Operation::kRewrap, Operation::kGenerateDataKey}) {
    EXPECT_EQ(*TokenAccess::FromName(TokenAccess::Name(operation)), operation);
  }
  EXPECT_TRUE(absl::IsInvalidArgument(TokenAccess::FromName("encrypt").status()));
}

}  // namespace
}  // namespace sealbox::server
