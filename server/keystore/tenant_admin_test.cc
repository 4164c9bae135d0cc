// TenantAdmin: tenants made, listed and deleted; run over every backend (testing/test_store.h): the
// same suite for the file and for etcd. Backend details are tested beside each backend.
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

class TenantAdminTest : public testing::KeystoreFixture {};

TEST_P(TenantAdminTest, Tenants) {
  auto ks = OpenOrDie();
  for (const char* name : {"a", "acme", "a-b_9", "z0123456789"}) {
    EXPECT_TRUE(ks->tenants().CreateTenant(name).ok()) << name;
  }
  for (const std::string& name :
       {std::string(), std::string("9a"), std::string("Acme"), std::string("a b"),
        std::string("a.b"), std::string("_a"), std::string(65, 'a')}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ks->tenants().CreateTenant(name).status())) << name;
  }
  EXPECT_TRUE(ks->tenants().CreateTenant(std::string(64, 'a')).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(ks->tenants().CreateTenant("acme").status()));
  EXPECT_THAT(*ks->tenants().ListTenants(), SizeIs(5));

  ASSERT_TRUE(ks->keys().CreateKey("acme", "k", KeyAlgorithm::kUnspecified).ok());
  auto token = ks->tokens().IssueToken("acme", "");
  ASSERT_TRUE(token.ok());
  EXPECT_TRUE(ks->tenants().DeleteTenant("acme").ok());
  EXPECT_TRUE(absl::IsNotFound(ks->tenants().DeleteTenant("acme")));
  EXPECT_EQ(ks->snapshot()->FindTenant("acme"), nullptr);
  EXPECT_TRUE(absl::IsNotFound(ks->snapshot()->TenantForToken(token->token).status()));
  EXPECT_THAT(*ks->tenants().ListTenants(), SizeIs(4));
  // A tenant of the same name starts empty.
  ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
  EXPECT_TRUE(absl::IsNotFound(ks->keys().GetKey("acme", "k").status()));
}

INSTANTIATE_TEST_SUITE_P(Backends, TenantAdminTest, ::testing::ValuesIn(testing::AllBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sealbox::server
