#include "server/bench/load_common.h"

#include "gtest/gtest.h"

namespace sealbox::load {
namespace {

TEST(SizeNameTest, UsesTheLargestUnitThatDividesTheSize) {
  EXPECT_EQ(SizeName(int64_t{1} << 30), "1 GiB");
  EXPECT_EQ(SizeName(int64_t{3} << 30), "3 GiB");
  EXPECT_EQ(SizeName(1 << 20), "1 MiB");
  EXPECT_EQ(SizeName(65536), "64 KiB");
  EXPECT_EQ(SizeName(1536), "1536 B");
  EXPECT_EQ(SizeName(64), "64 B");
}

TEST(RandomBytesTest, SameBytesEveryCall) {
  EXPECT_EQ(RandomBytes(100).size(), 100u);
  EXPECT_EQ(RandomBytes(100), RandomBytes(100));
  EXPECT_EQ(RandomBytes(100).substr(0, 10), RandomBytes(10));
}

TEST(AnnotatedTest, PrefixesTheMessageAndKeepsTheCode) {
  const absl::Status status = Annotated("Seal", absl::UnavailableError("down"));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "Seal: down");
  EXPECT_TRUE(Annotated("Seal", absl::OkStatus()).ok());
}

}  // namespace
}  // namespace sealbox::load
