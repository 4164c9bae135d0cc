#include "crypto/byte_order/byte_order.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

TEST(ByteOrderTest, ThirtyTwoBitsMostSignificantByteFirst) {
  uint8_t bytes[5] = {0, 0, 0, 0, 0xaa};
  StoreBigEndian32(0x01020304, bytes + 1);  // unaligned on purpose
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[1], 0x01);
  EXPECT_EQ(bytes[2], 0x02);
  EXPECT_EQ(bytes[3], 0x03);
  EXPECT_EQ(bytes[4], 0x04);
  EXPECT_EQ(LoadBigEndian32(bytes + 1), 0x01020304u);
}

TEST(ByteOrderTest, SixtyFourBitsMostSignificantByteFirst) {
  uint8_t bytes[9] = {};
  StoreBigEndian64(0x0102030405060708, bytes + 1);
  EXPECT_EQ(bytes[0], 0);
  for (int i = 1; i <= 8; ++i) EXPECT_EQ(bytes[i], i);
  EXPECT_EQ(LoadBigEndian64(bytes + 1), 0x0102030405060708u);
}

TEST(ByteOrderTest, ExtremesRoundTrip) {
  uint8_t bytes[8];
  for (uint64_t value : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}, uint64_t{1} << 63}) {
    StoreBigEndian64(value, bytes);
    EXPECT_EQ(LoadBigEndian64(bytes), value);
    StoreBigEndian32(static_cast<uint32_t>(value >> 32), bytes);
    EXPECT_EQ(LoadBigEndian32(bytes), static_cast<uint32_t>(value >> 32));
  }
}

}  // namespace
}  // namespace sealbox::crypto
