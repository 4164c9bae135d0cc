#include "crypto/secret/secret_bytes.h"

#include <utility>

#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

TEST(SecretBytesTest, HoldsItsBytes) {
  const uint8_t data[] = {1, 2, 3};
  SecretBytes secret(absl::MakeConstSpan(data));
  EXPECT_EQ(secret.size(), 3u);
  EXPECT_EQ(secret.span(), absl::MakeConstSpan(data));
  EXPECT_EQ(SecretBytes(5).span(), absl::Span<const uint8_t>(std::vector<uint8_t>(5)));
}

TEST(SecretBytesTest, MoveLeavesTheSourceEmpty) {
  const uint8_t data[] = {1, 2, 3};
  SecretBytes a(absl::MakeConstSpan(data));
  SecretBytes b(std::move(a));
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): checking the contract
  SecretBytes c(7);
  c = std::move(b);
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(c.span(), absl::MakeConstSpan(data));
}

TEST(SecretBytesTest, CloneIsAnEqualIndependentCopy) {
  const uint8_t data[] = {9, 8};
  SecretBytes a(absl::MakeConstSpan(data));
  SecretBytes b = a.Clone();
  b.mutable_span()[0] = 0;
  EXPECT_EQ(a.span(), absl::MakeConstSpan(data));
}

}  // namespace
}  // namespace sealbox::crypto
