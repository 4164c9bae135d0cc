// Checks the portable kernel against published vectors (FIPS-197, the GCM spec)
// and against simple, independent reference code (crypto/testing).
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "crypto/kernel/kernel.h"
#include "crypto/portable/portable.h"
#include "crypto/testing/kernel_reference.h"
#include "gtest/gtest.h"

namespace sealbox::crypto::kernel {
namespace {

using test::Bytes;
using test::FromHex;
using test::McGrewViegaCase;
using test::RandomBytes;
using test::ReferenceAes;
using test::ReferenceGhash;
using test::ToHex;

KeySchedule Expand(const Bytes& key) {
  KeySchedule schedule;
  kPortableKernel.expand_key(key.data(), key.size(), &schedule);
  return schedule;
}

// ---------------------------------------------------------------------------
// Tests.
// ---------------------------------------------------------------------------

TEST(PortableKernelTest, Identity) {
  EXPECT_STREQ(kPortableKernel.name, "portable");
  EXPECT_TRUE(kPortableKernel.constant_time);
}

TEST(PortableKernelTest, Fips197AppendixC) {
  for (const test::AesVector& c : test::kFips197AppendixC) {
    const Bytes plaintext = FromHex(c.plaintext);
    const KeySchedule schedule = Expand(FromHex(c.key));
    uint8_t out[16];
    kPortableKernel.encrypt_block(schedule, plaintext.data(), out);
    EXPECT_EQ(ToHex(out, 16), c.ciphertext) << "key " << c.key;
    // In place.
    uint8_t block[16];
    std::memcpy(block, plaintext.data(), 16);
    kPortableKernel.encrypt_block(schedule, block, block);
    EXPECT_EQ(ToHex(block, 16), c.ciphertext) << "key " << c.key;
  }
}

TEST(PortableKernelTest, AesMatchesReference) {
  std::mt19937 rng(1);
  for (size_t key_bytes : {16, 24, 32}) {
    for (int trial = 0; trial < 100; ++trial) {
      const Bytes key = RandomBytes(rng, key_bytes);
      const KeySchedule schedule = Expand(key);
      const ReferenceAes reference(key);
      for (int i = 0; i < 4; ++i) {
        const Bytes block = RandomBytes(rng, 16);
        uint8_t out[16];
        kPortableKernel.encrypt_block(schedule, block.data(), out);
        ASSERT_EQ(ToHex(out, 16), ToHex(reference.Encrypt(block)))
            << "key " << ToHex(key) << " block " << ToHex(block);
      }
    }
  }
}

// McGrew and Viega's test cases 1-4 (AES-128), 8 and 10 (AES-192), 13-16 (AES-256).
TEST(PortableKernelTest, GcmSpecVectors) {
  for (int number : {1, 2, 3, 4, 8, 10, 13, 14, 15, 16}) {
    const test::GcmVector& c = McGrewViegaCase(number);
    const Bytes sealed = test::KernelGcmSeal(kPortableKernel, FromHex(c.key),
                                             FromHex(c.iv), FromHex(c.aad),
                                             FromHex(c.plaintext));
    EXPECT_EQ(ToHex(sealed), c.ciphertext + c.tag) << "test case " << number;
  }
}

TEST(PortableKernelTest, GhashMatchesReference) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 20; ++trial) {
    const KeySchedule schedule = Expand(RandomBytes(rng, 16));
    uint8_t h[16] = {};
    kPortableKernel.encrypt_block(schedule, h, h);
    for (size_t blocks = 0; blocks <= 20; ++blocks) {
      // Dense operands (all ones) are where carries would overflow a hole.
      const Bytes data =
          blocks % 3 == 0 ? Bytes(16 * blocks, 0xff) : RandomBytes(rng, 16 * blocks);
      const Bytes start = RandomBytes(rng, 16);
      uint8_t x[16], expected[16];
      std::memcpy(x, start.data(), 16);
      std::memcpy(expected, start.data(), 16);
      kPortableKernel.ghash(schedule, x, data.data(), blocks);
      ReferenceGhash(h, expected, data.data(), blocks);
      ASSERT_EQ(ToHex(x, 16), ToHex(expected, 16)) << "blocks " << blocks;
    }
  }
}

// seal_blocks and open_blocks against CTR built from encrypt_block plus the
// reference GHASH (test::ReferenceSeal): every block count up to 40, counters
// about to wrap, in place and out of place, at odd alignments.
TEST(PortableKernelTest, SealAndOpenMatchReference) {
  std::mt19937 rng(3);
  const uint32_t starts[] = {0, 1, 0xfffffff0, 0xfffffff9, 0xfffffffe, 0xffffffff};
  for (size_t key_bytes : {16, 24, 32}) {
    const KeySchedule schedule = Expand(RandomBytes(rng, key_bytes));
    const test::BlockCipher encrypt = test::KernelBlockCipher(kPortableKernel, schedule);
    uint8_t h[16] = {};
    kPortableKernel.encrypt_block(schedule, h, h);
    for (size_t blocks = 0; blocks <= 40; ++blocks) {
      for (uint32_t start : starts) {
        for (bool in_place : {false, true}) {
          const size_t in_offset = (blocks + start) % 8;
          const size_t out_offset = in_place ? in_offset : (blocks * 3 + 5) % 16;
          const size_t size = 16 * blocks;
          const Bytes plaintext = RandomBytes(rng, size);
          Bytes counter_start = RandomBytes(rng, 16);
          for (int i = 0; i < 4; ++i)
            counter_start[12 + i] = static_cast<uint8_t>(start >> (24 - 8 * i));
          const Bytes x_start = RandomBytes(rng, 16);

          // Reference.
          Bytes expected(size);
          uint8_t ref_counter[16], ref_x[16];
          std::memcpy(ref_counter, counter_start.data(), 16);
          std::memcpy(ref_x, x_start.data(), 16);
          test::ReferenceSeal(encrypt, h, ref_counter, ref_x, plaintext.data(),
                              expected.data(), blocks);

          // Seal.
          Bytes in_buffer(size + 16), out_buffer(size + 16);
          uint8_t* in = in_buffer.data() + in_offset;
          uint8_t* out = in_place ? in : out_buffer.data() + out_offset;
          if (size > 0) std::memcpy(in, plaintext.data(), size);
          uint8_t counter[16], x[16];
          std::memcpy(counter, counter_start.data(), 16);
          std::memcpy(x, x_start.data(), 16);
          kPortableKernel.seal_blocks(schedule, counter, x, in, out, blocks);
          const std::string where = "key_bytes " + std::to_string(key_bytes) +
                                    " blocks " + std::to_string(blocks) + " start " +
                                    std::to_string(start) + " in_place " +
                                    std::to_string(in_place);
          ASSERT_EQ(ToHex(out, size), ToHex(expected)) << where;
          ASSERT_EQ(ToHex(counter, 16), ToHex(ref_counter, 16)) << where;
          ASSERT_EQ(ToHex(x, 16), ToHex(ref_x, 16)) << where;

          // Open what was sealed.
          uint8_t* opened = in_place ? out : in;
          std::memcpy(counter, counter_start.data(), 16);
          std::memcpy(x, x_start.data(), 16);
          kPortableKernel.open_blocks(schedule, counter, x, out, opened, blocks);
          ASSERT_EQ(ToHex(opened, size), ToHex(plaintext)) << where;
          ASSERT_EQ(ToHex(counter, 16), ToHex(ref_counter, 16)) << where;
          ASSERT_EQ(ToHex(x, 16), ToHex(ref_x, 16)) << where;
        }
      }
    }
  }
}

}  // namespace
}  // namespace sealbox::crypto::kernel
