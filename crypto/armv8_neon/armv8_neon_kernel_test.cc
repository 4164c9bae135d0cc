// What only the armv8_neon kernel has: its S-box and GHASH tables against their
// definitions, and its assembly loops on their own (every length they can see,
// counter wrap, in place, odd alignment) and their calling convention. (The kernel's
// results against published vectors and reference code are checked with every
// other kernel's by //crypto/tests:kernel_test.)
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "crypto/armv8_neon/aes_neon.h"
#include "crypto/armv8_neon/armv8_neon.h"
#include "crypto/armv8_neon/ghash_neon.h"
#include "crypto/kernel/kernel.h"
#include "crypto/testing/abi_check.h"
#include "crypto/testing/kernel_reference.h"
#include "gtest/gtest.h"

namespace sealbox::crypto::kernel {
namespace {

using test::Bytes;
using test::FromHex;
using test::Increment32;
using test::RandomBytes;
using test::ReferenceAes;
using test::ReferenceGhash;
using test::ToHex;

const Kernel& kNeon = kArmv8NeonKernel;

// KeySchedule is 4 KiB: kept on the heap.
std::unique_ptr<KeySchedule> Expand(const Bytes& key) {
  auto schedule = std::make_unique<KeySchedule>();
  kNeon.expand_key(key.data(), key.size(), schedule.get());
  return schedule;
}

// ---------------------------------------------------------------------------
// Tests.
// ---------------------------------------------------------------------------

TEST(Armv8NeonKernelTest, Identity) {
  EXPECT_STREQ(kNeon.name, "armv8_neon");
  EXPECT_TRUE(kNeon.constant_time);
}

// The table the assembly loads into registers: the S-box, then the two
// permutations (ShiftRows, and ShiftRows followed by a one-row column rotation).
TEST(Armv8NeonKernelTest, TablesMatchDefinitions) {
  const uint8_t* tables = armv8_neon::AesTables();
  for (int x = 0; x < 256; ++x) {
    ASSERT_EQ(tables[x], test::ReferenceSbox(static_cast<uint8_t>(x))) << "S-box entry " << x;
  }
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(tables[256 + 4 * c + r], 4 * ((c + r) % 4) + r);
      const int r1 = (r + 1) % 4;
      EXPECT_EQ(tables[272 + 4 * c + r], 4 * ((c + r1) % 4) + r1);
    }
  }
}

// The eight-block loop and the one-block path agree for every position of a
// single set bit, in the data and in x.
TEST(Armv8NeonKernelTest, GhashGroupMatchesSingleBlocksBitByBit) {
  const auto schedule = Expand(FromHex("000102030405060708090a0b0c0d0e0f"));
  for (int bit = 0; bit < 9 * 128; ++bit) {
    uint8_t data[128] = {}, x_group[16] = {}, x_single[16] = {};
    if (bit < 8 * 128) {
      data[bit / 8] = static_cast<uint8_t>(1 << (bit % 8));
    } else {
      x_group[(bit % 128) / 8] = x_single[(bit % 128) / 8] = static_cast<uint8_t>(1 << (bit % 8));
    }
    kNeon.ghash(*schedule, x_group, data, 8);
    for (int b = 0; b < 8; ++b) kNeon.ghash(*schedule, x_single, data + 16 * b, 1);
    ASSERT_EQ(ToHex(x_group, 16), ToHex(x_single, 16)) << "bit " << bit;
  }
}

// The assembly loops on their own: each 4-block group of the counter-mode loop
// against encrypt_block, with the counter running over 2^32.
TEST(Armv8NeonKernelTest, CounterLoopsWrapAndAdvance) {
  std::mt19937 rng(4);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    armv8_neon::AesKey aes;
    armv8_neon::ExpandAesKey(key.data(), key.size(), &aes);
    auto* loop = key_bytes == 16   ? armv8_neon_ctr128_blocks
                 : key_bytes == 24 ? armv8_neon_ctr192_blocks
                                   : armv8_neon_ctr256_blocks;
    for (size_t quads : {1, 2, 3, 5}) {
      const Bytes in = RandomBytes(rng, 64 * quads);
      Bytes out(64 * quads);
      uint8_t counter[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xff, 0xff, 0xff, 0xfa};
      uint8_t expected_counter[16];
      std::memcpy(expected_counter, counter, 16);
      Bytes expected(64 * quads);
      for (size_t b = 0; b < 4 * quads; ++b) {
        uint8_t keystream[16];
        armv8_neon::AesEncryptBlock(aes, expected_counter, keystream);
        Increment32(expected_counter);
        for (int i = 0; i < 16; ++i) expected[16 * b + i] = in[16 * b + i] ^ keystream[i];
      }
      loop(aes.round_keys[0], counter, in.data(), out.data(), quads);
      EXPECT_EQ(ToHex(out), ToHex(expected)) << key_bytes << " " << quads;
      EXPECT_EQ(ToHex(counter, 16), ToHex(expected_counter, 16)) << key_bytes << " " << quads;
    }
  }
}

// The hand-written loops keep the callee-saved registers (x19-x29, d8-d15) and sp.
TEST(Armv8NeonKernelTest, AssemblyKeepsCallingConvention) {
  std::mt19937 rng(5);
  const Bytes key = RandomBytes(rng, 32);
  armv8_neon::AesKey aes;
  armv8_neon::ExpandAesKey(key.data(), key.size(), &aes);
  auto ghash_key = std::make_unique<armv8_neon::GhashKey>();
  armv8_neon::InitGhashKey(RandomBytes(rng, 16).data(), ghash_key.get());
  const Bytes in = RandomBytes(rng, 256);
  Bytes out(256);
  uint8_t counter[16] = {}, x[16] = {};
  for (auto* loop :
       {armv8_neon_ctr128_blocks, armv8_neon_ctr192_blocks, armv8_neon_ctr256_blocks}) {
    EXPECT_EQ(
        test::AbiCheckedCall(loop, aes.round_keys[0], counter, in.data(), out.data(), size_t{2}),
        "");
  }
  EXPECT_EQ(test::AbiCheckedCall(armv8_neon_ghash_blocks, ghash_key.get(), x, in.data(), size_t{2}),
            "");
  // And the whole kernel.
  const auto schedule = Expand(key);
  EXPECT_EQ(test::AbiCheckedCall(kNeon.seal_blocks, *schedule, counter, x, in.data(), out.data(),
                                 size_t{13}),
            "");
  EXPECT_EQ(test::AbiCheckedCall(kNeon.open_blocks, *schedule, counter, x, out.data(), out.data(),
                                 size_t{13}),
            "");
  EXPECT_EQ(test::AbiCheckedCall(kNeon.ghash, *schedule, x, in.data(), size_t{11}), "");
}

}  // namespace
}  // namespace sealbox::crypto::kernel
