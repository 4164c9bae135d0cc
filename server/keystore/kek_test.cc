#include "server/keystore/kek.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

TEST(KekTest, TakesThirtyTwoBytes) {
  const std::vector<uint8_t> bytes(kKekBytes, 0x42);
  absl::StatusOr<Kek> kek = Kek::FromBytes(bytes);
  ASSERT_TRUE(kek.ok()) << kek.status();
  EXPECT_EQ(kek->span(), absl::MakeConstSpan(bytes));
  EXPECT_EQ(kek->Clone().span(), absl::MakeConstSpan(bytes));
}

TEST(KekTest, RefusesAnyOtherLengthWithTheMessageUsersSee) {
  for (size_t size : {0, 16, 31, 33, 64}) {
    absl::StatusOr<Kek> kek = Kek::FromBytes(std::vector<uint8_t>(size, 0x42));
    ASSERT_TRUE(absl::IsInvalidArgument(kek.status())) << size;
    EXPECT_EQ(kek.status().message(), "the KEK must be 32 bytes, raw or as 64 hex digits");
  }
}

TEST(KekTest, FingerprintDependsOnTheKek) {
  Kek a = *Kek::FromBytes(std::vector<uint8_t>(kKekBytes, 1));
  Kek b = *Kek::FromBytes(std::vector<uint8_t>(kKekBytes, 2));
  EXPECT_NE(FingerprintOf(a), FingerprintOf(b));
  EXPECT_TRUE(FingerprintMatches(a, FingerprintOf(a).data()));
  EXPECT_FALSE(FingerprintMatches(a, FingerprintOf(b).data()));
}

}  // namespace
}  // namespace sealbox::server
