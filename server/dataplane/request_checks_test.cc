// The data plane's per-request checks, on their own: each refusal's code and message,
// in the order a caller meets them (name, permission, associated data, size).
#include "server/dataplane/request_checks.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/dataplane/data_plane_limits.h"

namespace sealbox::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Caller WithCertificate() { return Caller{CallSnapshot(), "acme", nullptr}; }

Caller WithToken(const TokenScope& scope) {
  auto grant = std::make_shared<TokenGrant>();
  grant->tenant = "acme";
  grant->id = "0123456789abcdef";
  grant->access = *TokenAccess::Create(scope);
  return Caller{CallSnapshot(), "acme", std::move(grant)};
}

TEST(RequestChecksTest, AWellFormedRequestWithinItsLimitPasses) {
  EXPECT_TRUE(CheckRequest(WithCertificate(), Operation::kSeal, "orders", "aad", 1024, 1024).ok());
  // A stream's start message: no size, no limit.
  EXPECT_TRUE(CheckRequest(WithCertificate(), Operation::kOpen, "orders", "", 0, 0).ok());
}

TEST(RequestChecksTest, AKeyNameNoKeyCanHaveIsRefusedWithoutEchoingIt) {
  const std::string bad = "../etc/passwd-secret-token";
  absl::Status s = CheckRequest(WithCertificate(), Operation::kSeal, bad, "", 1, 1024);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), Not(HasSubstr(bad)));
}

TEST(RequestChecksTest, ATokensScopeDecidesTheOperationAndTheKey) {
  const Caller seal_orders = WithToken({{Operation::kSeal}, {"orders-*"}});
  EXPECT_TRUE(CheckRequest(seal_orders, Operation::kSeal, "orders-eu", "", 1, 10).ok());
  absl::Status op = CheckRequest(seal_orders, Operation::kOpen, "orders-eu", "", 1, 10);
  EXPECT_TRUE(absl::IsPermissionDenied(op)) << op;
  EXPECT_THAT(op.message(), HasSubstr("open"));
  absl::Status key = CheckRequest(seal_orders, Operation::kSeal, "payments", "", 1, 10);
  EXPECT_TRUE(absl::IsPermissionDenied(key)) << key;
  EXPECT_THAT(key.message(), HasSubstr("orders-*"));
  // A certificate may do everything its tenant can.
  EXPECT_TRUE(CheckRequest(WithCertificate(), Operation::kRewrap, "payments", "", 1, 10).ok());
}

TEST(RequestChecksTest, AssociatedDataHasItsOwnLimit) {
  const std::string at_limit(kMaxAssociatedDataBytes, 'a');
  EXPECT_TRUE(CheckRequest(WithCertificate(), Operation::kSeal, "orders", at_limit, 1, 10).ok());
  absl::Status s =
      CheckRequest(WithCertificate(), Operation::kSeal, "orders", at_limit + "a", 1, 10);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("associated data"));
}

TEST(RequestChecksTest, AMessageOverTheUnaryLimitPointsToTheStreams) {
  absl::Status s = CheckRequest(WithCertificate(), Operation::kSeal, "orders", "", 1025, 1024);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("1025 bytes exceeds the unary limit of 1024"));
  EXPECT_THAT(s.message(), HasSubstr("SealStream/OpenStream"));
}

TEST(RequestChecksTest, ThePermissionIsCheckedBeforeTheSizes) {
  // A caller without the permission learns nothing of the limits.
  const Caller seal_only = WithToken({{Operation::kSeal}, {}});
  absl::Status s = CheckRequest(seal_only, Operation::kOpen, "orders",
                                std::string(kMaxAssociatedDataBytes + 1, 'a'), 9, 1);
  EXPECT_TRUE(absl::IsPermissionDenied(s)) << s;
}

}  // namespace
}  // namespace sealbox::server
