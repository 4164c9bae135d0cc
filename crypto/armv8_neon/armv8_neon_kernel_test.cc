// Checks the armv8_neon kernel against published vectors (FIPS-197, the GCM spec)
// and against plain reference code (crypto/testing); also the assembly loops on their
// own (every length they can see, counter wrap, in place, odd alignment) and their
// calling convention.
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
    ASSERT_EQ(tables[x], test::ReferenceSbox(static_cast<uint8_t>(x)))
        << "S-box entry " << x;
  }
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(tables[256 + 4 * c + r], 4 * ((c + r) % 4) + r);
      const int r1 = (r + 1) % 4;
      EXPECT_EQ(tables[272 + 4 * c + r], 4 * ((c + r1) % 4) + r1);
    }
  }
}

TEST(Armv8NeonKernelTest, Fips197AppendixC) {
  for (const test::AesVector& c : test::kFips197AppendixC) {
    const Bytes plaintext = FromHex(c.plaintext);
    const auto schedule = Expand(FromHex(c.key));
    uint8_t out[16];
    kNeon.encrypt_block(*schedule, plaintext.data(), out);
    EXPECT_EQ(ToHex(out, 16), c.ciphertext) << "key " << c.key;
    uint8_t block[16];
    std::memcpy(block, plaintext.data(), 16);
    kNeon.encrypt_block(*schedule, block, block);
    EXPECT_EQ(ToHex(block, 16), c.ciphertext) << "in place, key " << c.key;
  }
}

TEST(Armv8NeonKernelTest, AesMatchesReference) {
  std::mt19937 rng(1);
  for (size_t key_bytes : {16, 24, 32}) {
    for (int trial = 0; trial < 50; ++trial) {
      const Bytes key = RandomBytes(rng, key_bytes);
      const auto schedule = Expand(key);
      const ReferenceAes reference(key);
      for (int i = 0; i < 4; ++i) {
        const Bytes block = RandomBytes(rng, 16);
        uint8_t out[16];
        kNeon.encrypt_block(*schedule, block.data(), out);
        ASSERT_EQ(ToHex(out, 16), ToHex(reference.Encrypt(block)))
            << "key " << ToHex(key) << " block " << ToHex(block);
      }
    }
  }
}

// McGrew and Viega's test cases 1-4 (AES-128), 7, 8 and 10 (AES-192), 13-16
// (AES-256).
TEST(Armv8NeonKernelTest, GcmSpecVectors) {
  for (int number : {1, 2, 3, 4, 7, 8, 10, 13, 14, 15, 16}) {
    const test::GcmVector& c = test::McGrewViegaCase(number);
    const Bytes sealed = test::KernelGcmSeal(kNeon, FromHex(c.key), FromHex(c.iv),
                                             FromHex(c.aad), FromHex(c.plaintext));
    EXPECT_EQ(ToHex(sealed), c.ciphertext + c.tag) << "test case " << number;
  }
}

// Every block count up to 40 and some past several groups of eight, with dense
// operands (all ones) among random ones, at an odd address.
TEST(Armv8NeonKernelTest, GhashMatchesReference) {
  std::mt19937 rng(2);
  std::vector<size_t> counts;
  for (size_t n = 0; n <= 40; ++n) counts.push_back(n);
  for (size_t n : {63, 64, 65, 127, 128, 129, 300}) counts.push_back(n);
  for (int trial = 0; trial < 8; ++trial) {
    const auto schedule = Expand(RandomBytes(rng, 16 + 8 * (trial % 3)));
    uint8_t h[16] = {};
    kNeon.encrypt_block(*schedule, h, h);
    for (size_t blocks : counts) {
      Bytes buffer = RandomBytes(rng, 16 * blocks + 1);
      if (blocks % 3 == 0) std::fill(buffer.begin(), buffer.end(), 0xff);
      const uint8_t* data = buffer.data() + 1;
      const Bytes start = trial == 0 ? Bytes(16, 0xff) : RandomBytes(rng, 16);
      uint8_t x[16], expected[16];
      std::memcpy(x, start.data(), 16);
      std::memcpy(expected, start.data(), 16);
      kNeon.ghash(*schedule, x, data, blocks);
      ReferenceGhash(h, expected, data, blocks);
      ASSERT_EQ(ToHex(x, 16), ToHex(expected, 16))
          << "trial " << trial << " blocks " << blocks;
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
      x_group[(bit % 128) / 8] = x_single[(bit % 128) / 8] =
          static_cast<uint8_t>(1 << (bit % 8));
    }
    kNeon.ghash(*schedule, x_group, data, 8);
    for (int b = 0; b < 8; ++b) kNeon.ghash(*schedule, x_single, data + 16 * b, 1);
    ASSERT_EQ(ToHex(x_group, 16), ToHex(x_single, 16)) << "bit " << bit;
  }
}

// seal_blocks and open_blocks against the reference for every block count up to 40
// and some larger ones (across the kernel's 128-block stretches), counters at and
// about to wrap, in place and not, at odd alignments.
TEST(Armv8NeonKernelTest, SealAndOpenMatchReference) {
  std::mt19937 rng(3);
  const uint32_t starts[] = {0, 1, 0xfffffff0, 0xfffffffb, 0xfffffffe, 0xffffffff};
  std::vector<size_t> counts;
  for (size_t n = 0; n <= 40; ++n) counts.push_back(n);
  for (size_t n : {61, 64, 127, 128, 129, 131, 256, 261}) counts.push_back(n);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const auto schedule = Expand(key);
    const ReferenceAes aes(key);
    const Bytes h = aes.Encrypt(Bytes(16, 0));
    for (size_t blocks : counts) {
      for (uint32_t start : starts) {
        for (bool in_place : {false, true}) {
          const size_t size = 16 * blocks;
          const size_t in_offset = (blocks + start) % 16;
          const size_t out_offset = in_place ? in_offset : (blocks * 3 + 5) % 16;
          const Bytes plaintext = RandomBytes(rng, size);
          Bytes counter_start = RandomBytes(rng, 16);
          for (int i = 0; i < 4; ++i) {
            counter_start[12 + i] = static_cast<uint8_t>(start >> (24 - 8 * i));
          }
          const Bytes x_start = RandomBytes(rng, 16);

          Bytes expected(size);
          uint8_t ref_counter[16], ref_x[16];
          std::memcpy(ref_counter, counter_start.data(), 16);
          std::memcpy(ref_x, x_start.data(), 16);
          test::ReferenceSeal(aes.AsBlockCipher(), h.data(), ref_counter, ref_x,
                              plaintext.data(), expected.data(), blocks);

          Bytes in_buffer(size + 16), out_buffer(size + 16);
          uint8_t* in = in_buffer.data() + in_offset;
          uint8_t* out = in_place ? in : out_buffer.data() + out_offset;
          if (size > 0) std::memcpy(in, plaintext.data(), size);
          uint8_t counter[16], x[16];
          std::memcpy(counter, counter_start.data(), 16);
          std::memcpy(x, x_start.data(), 16);
          kNeon.seal_blocks(*schedule, counter, x, in, out, blocks);
          const std::string where = "key_bytes " + std::to_string(key_bytes) +
                                    " blocks " + std::to_string(blocks) + " start " +
                                    std::to_string(start) + " in_place " +
                                    std::to_string(in_place);
          ASSERT_EQ(ToHex(out, size), ToHex(expected)) << where;
          ASSERT_EQ(ToHex(counter, 16), ToHex(ref_counter, 16)) << where;
          ASSERT_EQ(ToHex(x, 16), ToHex(ref_x, 16)) << where;

          uint8_t* opened = in_place ? out : in;
          std::memcpy(counter, counter_start.data(), 16);
          std::memcpy(x, x_start.data(), 16);
          kNeon.open_blocks(*schedule, counter, x, out, opened, blocks);
          ASSERT_EQ(ToHex(opened, size), ToHex(plaintext)) << where;
          ASSERT_EQ(ToHex(counter, 16), ToHex(ref_counter, 16)) << where;
          ASSERT_EQ(ToHex(x, 16), ToHex(ref_x, 16)) << where;
        }
      }
    }
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
  for (auto* loop : {armv8_neon_ctr128_blocks, armv8_neon_ctr192_blocks,
                     armv8_neon_ctr256_blocks}) {
    EXPECT_EQ(test::AbiCheckedCall(loop, aes.round_keys[0], counter, in.data(),
                                   out.data(), size_t{2}),
              "");
  }
  EXPECT_EQ(test::AbiCheckedCall(armv8_neon_ghash_blocks, ghash_key.get(), x, in.data(),
                                 size_t{2}),
            "");
  // And the whole kernel.
  const auto schedule = Expand(key);
  EXPECT_EQ(test::AbiCheckedCall(kNeon.seal_blocks, *schedule, counter, x, in.data(),
                                 out.data(), size_t{13}),
            "");
  EXPECT_EQ(test::AbiCheckedCall(kNeon.open_blocks, *schedule, counter, x, out.data(),
                                 out.data(), size_t{13}),
            "");
  EXPECT_EQ(test::AbiCheckedCall(kNeon.ghash, *schedule, x, in.data(), size_t{11}), "");
}

}  // namespace
}  // namespace sealbox::crypto::kernel
