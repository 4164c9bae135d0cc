#include "server/auth/tokens.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

// FIPS 180-2's examples: the digest the keystore stores is plain SHA-256.
TEST(TokensTest, TokenSha256IsSha256) {
  EXPECT_EQ(absl::BytesToHexString(TokenSha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(absl::BytesToHexString(TokenSha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(TokensTest, ANewTokenIsStoredByItsDigest) {
  absl::StatusOr<NewToken> a = GenerateToken();
  absl::StatusOr<NewToken> b = GenerateToken();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_THAT(a->token, ::testing::StartsWith("sbx_"));
  EXPECT_EQ(a->id.size(), 16u);
  EXPECT_EQ(a->sha256, TokenSha256(a->token));
  EXPECT_EQ(a->sha256.size(), 32u);
  EXPECT_NE(a->token, b->token);
  EXPECT_NE(a->sha256, b->sha256);
}

}  // namespace
}  // namespace sealbox::server
