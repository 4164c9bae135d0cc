#include "client/cli/admin_output.h"

#include "gtest/gtest.h"

namespace sealbox::client {
namespace {

namespace v1 = ::sealbox::v1;

constexpr int64_t kNov14 = 1700000000;  // 2023-11-14 22:13:20 UTC

v1::Key TwoVersionKey() {
  v1::Key key;
  key.set_tenant("acme");
  key.set_name("default");
  key.set_algorithm(v1::AES_256_GCM);
  key.set_primary_version(2);
  key.set_min_decryption_version(1);
  v1::KeyVersion* first = key.add_versions();
  first->set_version(1);
  first->set_state(v1::DESTROYED);
  first->mutable_create_time()->set_seconds(kNov14);
  v1::KeyVersion* second = key.add_versions();
  second->set_version(2);
  second->set_state(v1::ENABLED);
  second->mutable_create_time()->set_seconds(kNov14 + 2);
  second->set_imported(true);
  return key;
}

TEST(FormatUnixTimeTest, UtcToTheSecondAndADashForUnset) {
  EXPECT_EQ(FormatUnixTime(kNov14), "2023-11-14 22:13:20 UTC");
  EXPECT_EQ(FormatUnixTime(1), "1970-01-01 00:00:01 UTC");
  EXPECT_EQ(FormatUnixTime(0), "-");
}

TEST(DescribeKeyTest, AHeaderLineThenOneLinePerVersion) {
  EXPECT_EQ(DescribeKey(TwoVersionKey()),
            "acme/default  AES-256-GCM  primary v2  min decryption v1\n"
            "  v1    destroyed  2023-11-14 22:13:20 UTC\n"
            "  v2    enabled    2023-11-14 22:13:22 UTC  imported  (primary)\n");
}

TEST(DescribeKeyTest, ADisabledKeySaysSoOnItsHeaderLine) {
  v1::Key key = TwoVersionKey();
  key.set_disabled(true);
  EXPECT_EQ(DescribeKey(key),
            "acme/default  AES-256-GCM  primary v2  min decryption v1  DISABLED (no version "
            "seals or opens)\n"
            "  v1    destroyed  2023-11-14 22:13:20 UTC\n"
            "  v2    enabled    2023-11-14 22:13:22 UTC  imported  (primary)\n");
}

TEST(DescribeKeyTest, NamesEveryAlgorithmAndStateAndNumbersUnknownOnes) {
  v1::Key key;
  key.set_tenant("t");
  key.set_name("k");
  key.set_algorithm(v1::AES_128_GCM);
  key.set_primary_version(1);
  key.add_versions()->set_version(1);  // state unset, no time
  key.mutable_versions(0)->set_state(v1::DISABLED);
  EXPECT_EQ(DescribeKey(key),
            "t/k  AES-128-GCM  primary v1  min decryption v0\n"
            "  v1    disabled   -  (primary)\n");
  key.set_algorithm(static_cast<v1::Algorithm>(7));
  key.mutable_versions(0)->set_state(static_cast<v1::KeyVersionState>(9));
  EXPECT_EQ(DescribeKey(key),
            "t/k  algorithm 7  primary v1  min decryption v0\n"
            "  v1    state 9    -  (primary)\n");
}

TEST(DescribeTenantTest, KeysThenTokensWithTheirDescriptions) {
  v1::Tenant tenant;
  tenant.set_name("acme");
  tenant.add_keys("default");
  tenant.add_keys("backups");
  v1::TokenInfo* described = tenant.add_tokens();
  described->set_id("t1");
  described->set_description("billing prod");
  described->mutable_create_time()->set_seconds(kNov14);
  v1::TokenInfo* bare = tenant.add_tokens();
  bare->set_id("t2");
  EXPECT_EQ(DescribeTenant(tenant),
            "tenant acme\n"
            "  key    default\n"
            "  key    backups\n"
            "  token  t1  2023-11-14 22:13:20 UTC  billing prod\n"
            "  token  t2  -\n");
}

TEST(DescribeTenantTest, ATenantWithNothingYet) {
  v1::Tenant tenant;
  tenant.set_name("empty");
  EXPECT_EQ(DescribeTenant(tenant), "tenant empty\n");
}

TEST(JsonOfTest, ProtoFieldNamesEveryFieldAndAFinalNewline) {
  v1::Key key = TwoVersionKey();
  key.set_min_decryption_version(0);  // a default value: still printed
  const std::string json = JsonOf(key);
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.back(), '\n');
  EXPECT_NE(json.find("\"primary_version\": 2"), std::string::npos) << json;
  EXPECT_NE(json.find("\"min_decryption_version\": 0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"algorithm\": \"AES_256_GCM\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"state\": \"DESTROYED\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"create_time\": \"2023-11-14T22:13:20Z\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"imported\": false"), std::string::npos) << json;
  EXPECT_EQ(json.find("primaryVersion"), std::string::npos) << json;  // not lowerCamel
}

}  // namespace
}  // namespace sealbox::client
