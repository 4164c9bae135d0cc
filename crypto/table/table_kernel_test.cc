#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "crypto/table/table.h"
#include "crypto/testing/kernel_reference.h"
#include "gtest/gtest.h"

namespace sealbox::crypto::kernel {
namespace {

using test::Bytes;
using test::FromHex;
using test::RandomBytes;
using test::ToHex;

std::unique_ptr<KeySchedule> Expand(const Bytes& key) {
  auto schedule = std::make_unique<KeySchedule>();
  kTableKernel.expand_key(key.data(), key.size(), schedule.get());
  return schedule;
}

Bytes EncryptOne(const Bytes& key, const Bytes& block) {
  auto schedule = Expand(key);
  Bytes out(kBlockBytes);
  kTableKernel.encrypt_block(*schedule, block.data(), out.data());
  return out;
}

TEST(TableKernelTest, Describes) {
  EXPECT_STREQ(kTableKernel.name, "table");
  EXPECT_FALSE(kTableKernel.constant_time);
}

// FIPS-197 Appendix C.
TEST(TableKernelTest, AesFips197) {
  for (const test::AesVector& c : test::kFips197AppendixC) {
    EXPECT_EQ(ToHex(EncryptOne(FromHex(c.key), FromHex(c.plaintext))), c.ciphertext);
  }
}

TEST(TableKernelTest, EncryptBlockInPlace) {
  auto schedule = Expand(FromHex("000102030405060708090a0b0c0d0e0f"));
  Bytes block = FromHex("00112233445566778899aabbccddeeff");
  kTableKernel.encrypt_block(*schedule, block.data(), block.data());
  EXPECT_EQ(ToHex(block), "69c4e0d86a7b0430d8cdb78070b4c55a");
}

// GHASH over one block X from 0 is X * H; with X = 1 (top bit first) it is H.
TEST(TableKernelTest, GhashOfOneIsH) {
  auto schedule = Expand(Bytes(16, 0));
  uint8_t x[16] = {};
  Bytes one(16, 0);
  one[0] = 0x80;
  kTableKernel.ghash(*schedule, x, one.data(), 1);
  EXPECT_EQ(ToHex(x, 16), "66e94bd4ef8a2c3b884cfa59ca342b2e");
}

// McGrew & Viega, "The Galois/Counter Mode of Operation", test cases 1-4 and 16,
// GCM put together from the kernel's parts as the mode layer does.
TEST(TableKernelTest, GcmMcGrewViega) {
  for (int number : {1, 2, 3, 4, 16}) {
    const test::GcmVector& c = test::McGrewViegaCase(number);
    const Bytes sealed = test::KernelGcmSeal(kTableKernel, FromHex(c.key), FromHex(c.iv),
                                             FromHex(c.aad), FromHex(c.plaintext));
    const size_t size = sealed.size() - 16;
    EXPECT_EQ(ToHex(sealed.data(), size), c.ciphertext) << "test case " << number;
    EXPECT_EQ(ToHex(sealed.data() + size, 16), c.tag) << "test case " << number;
  }
}

enum class Buffers { kSeparate, kInPlace, kMisaligned };

// seal_blocks and open_blocks against test::ReferenceSeal for 0..40 blocks, counters
// about to wrap, and each buffer layout.
class BlocksTest : public ::testing::TestWithParam<Buffers> {};

TEST_P(BlocksTest, MatchesReference) {
  const Buffers layout = GetParam();
  std::mt19937 rng(1234);
  const uint32_t starts[] = {0, 1, 0x7fffffff, 0xffffffe0, 0xfffffffe, 0xffffffff};
  for (size_t key_bytes : {16, 24, 32}) {
    auto schedule = Expand(RandomBytes(rng, key_bytes));
    const KeySchedule& s = *schedule;
    const test::BlockCipher encrypt = test::KernelBlockCipher(kTableKernel, s);
    uint8_t h[16] = {};
    kTableKernel.encrypt_block(s, h, h);
    for (uint32_t start : starts) {
      for (size_t blocks = 0; blocks <= 40; ++blocks) {
        SCOPED_TRACE(testing::Message()
                     << "key " << key_bytes << " start " << start << " blocks " << blocks);
        const size_t size = blocks * 16;
        const Bytes plaintext = RandomBytes(rng, size);
        Bytes counter0 = RandomBytes(rng, 16);
        for (int i = 0; i < 4; ++i) counter0[12 + i] = static_cast<uint8_t>(start >> (24 - 8 * i));
        const Bytes x0 = RandomBytes(rng, 16);

        Bytes want_counter = counter0, want_x = x0, want(size);
        test::ReferenceSeal(encrypt, h, want_counter.data(), want_x.data(), plaintext.data(),
                            want.data(), blocks);

        // Backing store with room to misalign either buffer.
        Bytes in_store(size + 8), out_store(size + 8);
        uint8_t* in = in_store.data();
        uint8_t* out = out_store.data();
        if (layout == Buffers::kMisaligned) {
          in += 1;
          out += 3;
        } else if (layout == Buffers::kInPlace) {
          out = in;
        }

        // Seal.
        std::copy(plaintext.begin(), plaintext.end(), in);
        Bytes counter = counter0, x = x0;
        kTableKernel.seal_blocks(s, counter.data(), x.data(), in, out, blocks);
        EXPECT_EQ(ToHex(out, size), ToHex(want));
        EXPECT_EQ(ToHex(counter), ToHex(want_counter));
        EXPECT_EQ(ToHex(x), ToHex(want_x));

        // Open the reference ciphertext: GHASH also absorbs the ciphertext.
        std::copy(want.begin(), want.end(), in);
        counter = counter0;
        x = x0;
        kTableKernel.open_blocks(s, counter.data(), x.data(), in, out, blocks);
        EXPECT_EQ(ToHex(out, size), ToHex(plaintext));
        EXPECT_EQ(ToHex(counter), ToHex(want_counter));
        EXPECT_EQ(ToHex(x), ToHex(want_x));

        // inc32 wraps the low word and leaves the upper 96 bits alone.
        const uint32_t end = start + static_cast<uint32_t>(blocks);
        Bytes expected_counter = counter0;
        for (int i = 0; i < 4; ++i)
          expected_counter[12 + i] = static_cast<uint8_t>(end >> (24 - 8 * i));
        EXPECT_EQ(ToHex(counter), ToHex(expected_counter));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, BlocksTest,
                         ::testing::Values(Buffers::kSeparate, Buffers::kInPlace,
                                           Buffers::kMisaligned));

}  // namespace
}  // namespace sealbox::crypto::kernel
