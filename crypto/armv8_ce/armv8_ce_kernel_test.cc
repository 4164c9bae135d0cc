// Checks both armv8_ce kernels against published vectors (FIPS-197, the GCM
// spec) and against simple, independent reference code (crypto/testing); and checks
// that every assembly entry point keeps the AAPCS64 callee-saved registers and
// touches no byte outside its buffers. AArch64 only; the EOR3 kernel's tests
// skip themselves on CPUs without SHA3.
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "crypto/armv8_ce/armv8_ce.h"
#include "crypto/kernel/kernel.h"
#include "crypto/testing/abi_check.h"
#include "crypto/testing/kernel_reference.h"
#include "gtest/gtest.h"

// The bits of AT_HWCAP (<asm/hwcap.h>) the kernels need.
constexpr unsigned long kHwcapAes = 1ul << 3;
constexpr unsigned long kHwcapPmull = 1ul << 4;
constexpr unsigned long kHwcapSha3 = 1ul << 17;

extern "C" {
void sealbox_armv8_ce_expand_key(const uint8_t*, size_t, uint8_t*);
void sealbox_armv8_ce_encrypt_block(const uint8_t*, const uint8_t*, uint8_t*);
void sealbox_armv8_ce_ghash(const uint8_t*, uint8_t*, const uint8_t*, size_t);
void sealbox_armv8_ce_ghash_eor3(const uint8_t*, uint8_t*, const uint8_t*, size_t);
void sealbox_armv8_ce_seal_blocks(const uint8_t*, uint8_t*, uint8_t*,
                                  const uint8_t*, uint8_t*, size_t);
void sealbox_armv8_ce_open_blocks(const uint8_t*, uint8_t*, uint8_t*,
                                  const uint8_t*, uint8_t*, size_t);
void sealbox_armv8_ce_seal_blocks_eor3(const uint8_t*, uint8_t*, uint8_t*,
                                       const uint8_t*, uint8_t*, size_t);
void sealbox_armv8_ce_open_blocks_eor3(const uint8_t*, uint8_t*, uint8_t*,
                                       const uint8_t*, uint8_t*, size_t);
}

namespace sealbox::crypto::kernel {
namespace {

using test::Bytes;
using test::FromHex;
using test::RandomBytes;
using test::ReferenceAes;
using test::ReferenceGhash;
using test::ToHex;

bool CpuHas(unsigned long bits) { return (getauxval(AT_HWCAP) & bits) == bits; }

// ---------------------------------------------------------------------------
// Memory that faults just past its end, so that reading or writing one byte
// beyond a buffer placed at the end crashes the test.
// ---------------------------------------------------------------------------

class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t size) {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    mapped_ = (size + page_ - 1) / page_ * page_ + page_;
    base_ = static_cast<uint8_t*>(
        mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0));
    EXPECT_NE(base_, MAP_FAILED);
    EXPECT_EQ(mprotect(base_ + mapped_ - page_, page_, PROT_NONE), 0);
    data_ = base_ + mapped_ - page_ - size;
  }
  ~GuardedBuffer() { munmap(base_, mapped_); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  uint8_t* data() { return data_; }

 private:
  size_t page_;
  size_t mapped_;
  uint8_t* base_;
  uint8_t* data_;
};

// ---------------------------------------------------------------------------
// Tests, for both kernels.
// ---------------------------------------------------------------------------

struct KernelCase {
  const Kernel* kernel;
  const char* name;
  unsigned long hwcaps;
};

class Armv8CeKernelTest : public testing::TestWithParam<KernelCase> {
 protected:
  void SetUp() override {
    if (!CpuHas(GetParam().hwcaps)) {
      GTEST_SKIP() << "this CPU lacks a feature " << GetParam().name << " needs";
    }
  }

  const Kernel& kernel() const { return *GetParam().kernel; }

  KeySchedule Expand(const Bytes& key) const {
    KeySchedule schedule;
    kernel().expand_key(key.data(), key.size(), &schedule);
    return schedule;
  }
};

TEST_P(Armv8CeKernelTest, Identity) {
  EXPECT_STREQ(kernel().name, GetParam().name);
  EXPECT_TRUE(kernel().constant_time);
}

TEST_P(Armv8CeKernelTest, Fips197AppendixC) {
  for (const test::AesVector& c : test::kFips197AppendixC) {
    const Bytes plaintext = FromHex(c.plaintext);
    const KeySchedule schedule = Expand(FromHex(c.key));
    uint8_t out[16];
    kernel().encrypt_block(schedule, plaintext.data(), out);
    EXPECT_EQ(ToHex(out, 16), c.ciphertext) << "key " << c.key;
    uint8_t block[16];
    std::memcpy(block, plaintext.data(), 16);
    kernel().encrypt_block(schedule, block, block);
    EXPECT_EQ(ToHex(block, 16), c.ciphertext) << "key " << c.key << ", in place";
  }
}

TEST_P(Armv8CeKernelTest, AesMatchesReference) {
  std::mt19937 rng(1);
  for (size_t key_bytes : {16, 24, 32}) {
    for (int trial = 0; trial < 20; ++trial) {
      const Bytes key = RandomBytes(rng, key_bytes);
      const KeySchedule schedule = Expand(key);
      const ReferenceAes reference(key);
      for (int i = 0; i < 4; ++i) {
        const Bytes block = RandomBytes(rng, 16);
        uint8_t out[16];
        kernel().encrypt_block(schedule, block.data(), out);
        ASSERT_EQ(ToHex(out, 16), ToHex(reference.Encrypt(block)))
            << "key " << ToHex(key) << " block " << ToHex(block);
      }
    }
  }
}

// McGrew and Viega's test cases 1-4 (AES-128), 8 and 10 (AES-192), 13-16 (AES-256).
TEST_P(Armv8CeKernelTest, GcmSpecVectors) {
  for (int number : {1, 2, 3, 4, 8, 10, 13, 14, 15, 16}) {
    const test::GcmVector& c = test::McGrewViegaCase(number);
    const Bytes sealed = test::KernelGcmSeal(kernel(), FromHex(c.key), FromHex(c.iv),
                                             FromHex(c.aad), FromHex(c.plaintext));
    EXPECT_EQ(ToHex(sealed), c.ciphertext + c.tag) << "test case " << number;
  }
}

TEST_P(Armv8CeKernelTest, GhashMatchesReference) {
  std::mt19937 rng(2);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const KeySchedule schedule = Expand(key);
    uint8_t h[16] = {};
    ReferenceAes(key).Encrypt(h, h);
    std::vector<size_t> counts;
    for (size_t n = 0; n <= 40; ++n) counts.push_back(n);
    for (size_t n : {47, 48, 63, 64, 100, 129}) counts.push_back(n);
    for (size_t blocks : counts) {
      // Dense operands (all ones) exercise every carry-less product term.
      const Bytes data =
          blocks % 3 == 0 ? Bytes(16 * blocks, 0xff) : RandomBytes(rng, 16 * blocks);
      const Bytes start = RandomBytes(rng, 16);
      const size_t offset = blocks % 16;  // any alignment
      Bytes buffer(16 * blocks + 16);
      if (blocks > 0) std::memcpy(buffer.data() + offset, data.data(), data.size());
      uint8_t x[16], expected[16];
      std::memcpy(x, start.data(), 16);
      std::memcpy(expected, start.data(), 16);
      kernel().ghash(schedule, x, buffer.data() + offset, blocks);
      ReferenceGhash(h, expected, data.data(), blocks);
      ASSERT_EQ(ToHex(x, 16), ToHex(expected, 16))
          << "key_bytes " << key_bytes << " blocks " << blocks;
    }
  }
}

// seal_blocks and open_blocks against the reference CTR and GHASH: every block
// count up to 40 and some past the 16-block main loop's multiples, counters
// about to wrap (inc32 is modulo 2^32 and leaves the upper 96 bits alone), in
// place and out of place, at odd alignments.
TEST_P(Armv8CeKernelTest, SealAndOpenMatchReference) {
  std::mt19937 rng(3);
  const uint32_t starts[] = {0, 1, 0xfffffff0, 0xfffffff9, 0xfffffffe, 0xffffffff};
  std::vector<size_t> counts;
  for (size_t n = 0; n <= 40; ++n) counts.push_back(n);
  for (size_t n : {47, 48, 49, 63, 64, 65, 95, 100, 127, 128, 129, 255}) {
    counts.push_back(n);
  }
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const KeySchedule schedule = Expand(key);
    const ReferenceAes aes(key);
    uint8_t h[16] = {};
    aes.Encrypt(h, h);
    for (size_t blocks : counts) {
      for (uint32_t start : starts) {
        const size_t size = 16 * blocks;
        const Bytes plaintext = RandomBytes(rng, size);
        Bytes counter_start = RandomBytes(rng, 16);
        for (int i = 0; i < 4; ++i)
          counter_start[12 + i] = static_cast<uint8_t>(start >> (24 - 8 * i));
        const Bytes x_start = RandomBytes(rng, 16);
        Bytes expected(size), expected_counter = counter_start, expected_x = x_start;
        test::ReferenceSeal(aes.AsBlockCipher(), h, expected_counter.data(),
                            expected_x.data(), plaintext.data(), expected.data(), blocks);
        for (bool in_place : {false, true}) {
          const size_t in_offset = (blocks + start) % 8;
          const size_t out_offset = in_place ? in_offset : (blocks * 3 + 5) % 16;
          const std::string where = "key_bytes " + std::to_string(key_bytes) +
                                    " blocks " + std::to_string(blocks) + " start " +
                                    std::to_string(start) + " in_place " +
                                    std::to_string(in_place);
          // Guard bytes around the output catch stray writes.
          Bytes in_buffer(size + 32, 0xa5), out_buffer(size + 32, 0x5a);
          uint8_t* in = in_buffer.data() + in_offset;
          uint8_t* out = in_place ? in : out_buffer.data() + out_offset;
          if (size > 0) std::memcpy(in, plaintext.data(), size);
          const Bytes in_before = in_buffer, out_before = out_buffer;

          uint8_t counter[16], x[16];
          std::memcpy(counter, counter_start.data(), 16);
          std::memcpy(x, x_start.data(), 16);
          kernel().seal_blocks(schedule, counter, x, in, out, blocks);
          ASSERT_EQ(ToHex(out, size), ToHex(expected)) << where;
          ASSERT_EQ(ToHex(counter, 16), ToHex(expected_counter)) << where;
          ASSERT_EQ(ToHex(x, 16), ToHex(expected_x)) << where;
          Bytes& written = in_place ? in_buffer : out_buffer;
          const Bytes& before = in_place ? in_before : out_before;
          const size_t offset = in_place ? in_offset : out_offset;
          ASSERT_TRUE(std::equal(written.begin(), written.begin() + offset,
                                 before.begin()) &&
                      std::equal(written.begin() + offset + size, written.end(),
                                 before.begin() + offset + size))
              << where << ": wrote outside out";
          if (!in_place) {
            ASSERT_EQ(in_buffer, in_before) << where << ": wrote to in";
          }

          // Open what was sealed, into a third buffer or in place.
          Bytes opened_buffer(size + 32);
          uint8_t* opened = in_place ? out : opened_buffer.data() + (blocks % 16);
          std::memcpy(counter, counter_start.data(), 16);
          std::memcpy(x, x_start.data(), 16);
          kernel().open_blocks(schedule, counter, x, out, opened, blocks);
          ASSERT_EQ(ToHex(opened, size), ToHex(plaintext)) << where;
          ASSERT_EQ(ToHex(counter, 16), ToHex(expected_counter)) << where;
          ASSERT_EQ(ToHex(x, 16), ToHex(expected_x)) << where;
        }
      }
    }
  }
}

// Buffers that end at an inaccessible page: any read or write past
// in[0..16*blocks) or out[0..16*blocks) faults.
TEST_P(Armv8CeKernelTest, StaysInsideBuffers) {
  std::mt19937 rng(4);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const KeySchedule schedule = Expand(key);
    for (size_t blocks : {1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 45}) {
      const size_t size = 16 * blocks;
      GuardedBuffer in(size), out(size), opened(size);
      const Bytes plaintext = RandomBytes(rng, size);
      std::memcpy(in.data(), plaintext.data(), size);
      uint8_t counter[16] = {}, x[16] = {};
      kernel().seal_blocks(schedule, counter, x, in.data(), out.data(), blocks);
      std::memset(counter, 0, 16);
      std::memset(x, 0, 16);
      kernel().open_blocks(schedule, counter, x, out.data(), opened.data(), blocks);
      ASSERT_EQ(ToHex(opened.data(), size), ToHex(plaintext));
      kernel().ghash(schedule, x, out.data(), blocks);
    }
  }
}

TEST_P(Armv8CeKernelTest, SealAndOpenWholeRangeAtOnce) {
  // Long enough that the main loop runs several iterations with the counter
  // wrapping in the middle of one.
  std::mt19937 rng(5);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const KeySchedule schedule = Expand(key);
    const ReferenceAes aes(key);
    uint8_t h[16] = {};
    aes.Encrypt(h, h);
    const size_t blocks = 1000;
    const Bytes plaintext = RandomBytes(rng, 16 * blocks);
    Bytes counter_start = RandomBytes(rng, 16);
    counter_start[12] = counter_start[13] = counter_start[14] = 0xff;
    counter_start[15] = 0x00;  // wraps after 256 blocks
    const Bytes x_start = RandomBytes(rng, 16);
    Bytes expected(16 * blocks), expected_counter = counter_start, expected_x = x_start;
    test::ReferenceSeal(aes.AsBlockCipher(), h, expected_counter.data(),
                        expected_x.data(), plaintext.data(), expected.data(), blocks);
    Bytes buffer = plaintext;
    uint8_t counter[16], x[16];
    std::memcpy(counter, counter_start.data(), 16);
    std::memcpy(x, x_start.data(), 16);
    kernel().seal_blocks(schedule, counter, x, buffer.data(), buffer.data(), blocks);
    ASSERT_EQ(ToHex(buffer), ToHex(expected));
    ASSERT_EQ(ToHex(counter, 16), ToHex(expected_counter));
    ASSERT_EQ(ToHex(x, 16), ToHex(expected_x));
    std::memcpy(counter, counter_start.data(), 16);
    std::memcpy(x, x_start.data(), 16);
    kernel().open_blocks(schedule, counter, x, buffer.data(), buffer.data(), blocks);
    ASSERT_EQ(ToHex(buffer), ToHex(plaintext));
    ASSERT_EQ(ToHex(x, 16), ToHex(expected_x));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, Armv8CeKernelTest,
    testing::Values(KernelCase{&kArmv8CeKernel, "armv8_ce", kHwcapAes | kHwcapPmull},
                    KernelCase{&kArmv8CeEor3Kernel, "armv8_ce_eor3",
                               kHwcapAes | kHwcapPmull | kHwcapSha3}),
    [](const testing::TestParamInfo<KernelCase>& info) {
      return std::string(info.param.kernel == &kArmv8CeKernel ? "Plain" : "Eor3");
    });

// ---------------------------------------------------------------------------
// AAPCS64: every entry point keeps x19-x29, d8-d15 and sp.
// ---------------------------------------------------------------------------

// The assembly entry points directly (the kernels' C++ wrappers are checked by
// //crypto/tests:abi_test), through the shared trampoline in crypto/testing.
TEST(Armv8CeAbiTest, EntryPointsKeepCalleeSavedRegisters) {
  if (!CpuHas(kHwcapAes | kHwcapPmull)) GTEST_SKIP() << "no AES/PMULL";
  const bool sha3 = CpuHas(kHwcapSha3);
  using test::AbiCheckedCall;
  for (size_t key_bytes : {16, 24, 32}) {
    uint8_t key[32] = {1, 2, 3};
    KeySchedule schedule;
    uint8_t* keys = schedule.bytes;
    uint8_t counter[16] = {}, x[16] = {};
    Bytes in(16 * 37, 7), out(16 * 37);
    EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_expand_key, key, key_bytes, keys), "")
        << "expand_key " << key_bytes;
    EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_encrypt_block, keys, in.data(),
                             out.data()),
              "");
    for (size_t blocks : {0, 1, 5, 16, 37}) {
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_ghash, keys, x, in.data(), blocks), "")
          << "ghash " << blocks;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_seal_blocks, keys, counter, x, in.data(),
                               out.data(), blocks),
                "")
          << "seal " << blocks;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_open_blocks, keys, counter, x, in.data(),
                               out.data(), blocks),
                "")
          << "open " << blocks;
      if (!sha3) continue;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_ghash_eor3, keys, x, in.data(), blocks),
                "")
          << "ghash_eor3 " << blocks;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_seal_blocks_eor3, keys, counter, x,
                               in.data(), out.data(), blocks),
                "")
          << "seal_eor3 " << blocks;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_open_blocks_eor3, keys, counter, x,
                               in.data(), out.data(), blocks),
                "")
          << "open_eor3 " << blocks;
    }
  }
}

}  // namespace
}  // namespace sealbox::crypto::kernel
