// Every kernel this CPU supports, called directly through the kernel interface
// (crypto/kernel/kernel.h) rather than through the mode layer, against published
// vectors and the independent reference code of crypto/testing: key expansion
// and single blocks (FIPS-197), GHASH over every block count that crosses the
// kernels' 8-, 16- and 32-block aggregation, and seal/open across every unroll
// boundary and tail of the 8-, 16- and 32-block loops (BlockCounts), with
// counters about to wrap their low 32 bits in any lane, in place and not, at odd
// alignments; buffers that end at an inaccessible page, so any read or write past
// them faults; and one long message whose counter wraps mid-loop. The per-kernel
// tests beside each kernel check what only that kernel has.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crypto/dispatch/dispatch.h"
#include "crypto/kernel/kernel.h"
#include "crypto/testing/implementations.h"
#include "crypto/testing/kernel_reference.h"
#include "gtest/gtest.h"

namespace sealbox::crypto::kernel {
namespace {

using test::Bytes;
using test::FromHex;
using test::RandomBytes;
using test::ToHex;

// `size` bytes that end where an inaccessible page begins.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t size) {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    mapped_ = (size + page_ - 1) / page_ * page_ + page_;
    base_ = static_cast<uint8_t*>(
        mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
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

class KernelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<const Kernel*> kernel = SelectKernel(GetParam());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    kernel_ = *kernel;
  }

  KeySchedule Expand(const Bytes& key) const {
    KeySchedule schedule;
    kernel_->expand_key(key.data(), key.size(), &schedule);
    return schedule;
  }

  const Kernel* kernel_ = nullptr;
};

INSTANTIATE_TEST_SUITE_P(Impl, KernelTest, ::testing::ValuesIn(test::ImplementationsUnderTest()),
                         test::ImplementationTestName);

TEST_P(KernelTest, Identity) {
  EXPECT_EQ(kernel_->name, GetParam());
  // Only `table` admits to secret-dependent lookups.
  EXPECT_EQ(kernel_->constant_time, GetParam() != "table");
}

// An ExpandedKey allocates only the kernel's schedule_bytes: here they end (rounded
// up to the 64-byte alignment) where an inaccessible page begins, and the few bytes
// of rounding hold a canary, so a kernel that reads or writes past what it declared
// faults or is caught. Each entry point must agree with a whole KeySchedule's.
TEST_P(KernelTest, UsesOnlyTheScheduleBytesItDeclares) {
  ASSERT_GT(kernel_->schedule_bytes, 0u);
  ASSERT_LE(kernel_->schedule_bytes, kMaxKeyScheduleBytes);
  const size_t rounded = (kernel_->schedule_bytes + 63) / 64 * 64;
  GuardedBuffer buffer(rounded);
  uint8_t* bytes = buffer.data();
  ASSERT_EQ(reinterpret_cast<uintptr_t>(bytes) % alignof(KeySchedule), 0u);
  std::memset(bytes, 0xc5, rounded);
  auto* schedule = reinterpret_cast<KeySchedule*>(bytes);
  std::mt19937 rng(9);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    kernel_->expand_key(key.data(), key.size(), schedule);
    const KeySchedule whole = Expand(key);
    uint8_t out[16], expected[16];
    const Bytes block = RandomBytes(rng, 16);
    kernel_->encrypt_block(*schedule, block.data(), out);
    kernel_->encrypt_block(whole, block.data(), expected);
    EXPECT_EQ(ToHex(out, 16), ToHex(expected, 16));
    for (size_t blocks : {1, 7, 8, 16, 17, 32, 33, 64, 70}) {
      const Bytes in = RandomBytes(rng, 16 * blocks);
      for (bool seal : {true, false}) {
        auto run = seal ? kernel_->seal_blocks : kernel_->open_blocks;
        uint8_t counter[16] = {}, x[16] = {}, counter2[16] = {}, x2[16] = {};
        counter[15] = counter2[15] = 2;
        Bytes got(in.size()), want(in.size());
        run(*schedule, counter, x, in.data(), got.data(), blocks);
        run(whole, counter2, x2, in.data(), want.data(), blocks);
        EXPECT_EQ(ToHex(got), ToHex(want)) << blocks << (seal ? " seal" : " open");
        EXPECT_EQ(ToHex(x, 16), ToHex(x2, 16)) << blocks;
        kernel_->ghash(*schedule, x, in.data(), blocks);
        kernel_->ghash(whole, x2, in.data(), blocks);
        EXPECT_EQ(ToHex(x, 16), ToHex(x2, 16)) << blocks;
      }
    }
    for (size_t i = kernel_->schedule_bytes; i < rounded; ++i) {
      ASSERT_EQ(bytes[i], 0xc5) << "byte " << i << " past schedule_bytes written";
    }
  }
}

TEST_P(KernelTest, Fips197AppendixC) {
  for (const test::AesVector& c : test::kFips197AppendixC) {
    const Bytes plaintext = FromHex(c.plaintext);
    const KeySchedule schedule = Expand(FromHex(c.key));
    uint8_t out[16];
    kernel_->encrypt_block(schedule, plaintext.data(), out);
    EXPECT_EQ(ToHex(out, 16), c.ciphertext) << "key " << c.key;
  }
}

TEST_P(KernelTest, AesMatchesReference) {
  std::mt19937 rng(1);
  for (size_t key_bytes : {16, 24, 32}) {
    for (int trial = 0; trial < 50; ++trial) {
      const Bytes key = RandomBytes(rng, key_bytes);
      const KeySchedule schedule = Expand(key);
      const test::ReferenceAes reference(key);
      const Bytes block = RandomBytes(rng, 16);
      uint8_t out[16];
      kernel_->encrypt_block(schedule, block.data(), out);
      ASSERT_EQ(ToHex(out, 16), ToHex(reference.Encrypt(block))) << "key " << ToHex(key);
    }
  }
}

TEST_P(KernelTest, GcmSpecVectors) {
  for (int number : {1, 2, 3, 4, 8, 10, 13, 14, 15, 16}) {
    const test::GcmVector& c = test::McGrewViegaCase(number);
    const Bytes sealed = test::KernelGcmSeal(*kernel_, FromHex(c.key), FromHex(c.iv),
                                             FromHex(c.aad), FromHex(c.plaintext));
    EXPECT_EQ(ToHex(sealed), c.ciphertext + c.tag) << "test case " << number;
  }
}

TEST_P(KernelTest, GhashMatchesReference) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 2; ++trial) {
    const KeySchedule schedule = Expand(RandomBytes(rng, 16));
    uint8_t h[16] = {};
    kernel_->encrypt_block(schedule, h, h);
    for (size_t blocks = 0; blocks <= 70; ++blocks) {
      // Dense operands (all ones) too, where a carry or a lost bit would show.
      const Bytes data = blocks % 3 == 0 ? Bytes(16 * blocks, 0xff) : RandomBytes(rng, 16 * blocks);
      const Bytes start = RandomBytes(rng, 16);
      uint8_t x[16], expected[16];
      std::memcpy(x, start.data(), 16);
      std::memcpy(expected, start.data(), 16);
      kernel_->ghash(schedule, x, data.data(), blocks);
      test::ReferenceGhash(h, expected, data.data(), blocks);
      ASSERT_EQ(ToHex(x, 16), ToHex(expected, 16)) << "blocks " << blocks;
    }
  }
}

// Every count to 34 (one to four groups of 8, two of 16, one of 32, and every
// tail), then each side of 48, 64 and 80 (three to five groups of 16) and of 96 and
// 128 (three and four groups of 32).
std::vector<size_t> BlockCounts() {
  std::vector<size_t> counts;
  for (size_t n = 0; n <= 34; ++n) counts.push_back(n);
  for (size_t n : {47, 48, 49, 63, 64, 65, 79, 80, 95, 96, 97, 127, 128, 129}) counts.push_back(n);
  return counts;
}

TEST_P(KernelTest, SealAndOpenMatchReference) {
  std::mt19937 rng(3);
  // Low 32 bits of the first counter: wrapping within the first block, the middle
  // of a vector or group, and at its end.
  const uint32_t starts[] = {1, 0xffffffe3, 0xfffffff0, 0xfffffffd, 0xffffffff};
  for (size_t key_bytes : {16, 24, 32}) {
    const KeySchedule schedule = Expand(RandomBytes(rng, key_bytes));
    const test::BlockCipher encrypt = test::KernelBlockCipher(*kernel_, schedule);
    uint8_t h[16] = {};
    kernel_->encrypt_block(schedule, h, h);
    for (size_t blocks : BlockCounts()) {
      for (uint32_t start : starts) {
        const bool in_place = (blocks + start) % 2 == 0;
        const size_t in_offset = (blocks + start) % 8;
        const size_t out_offset = in_place ? in_offset : (blocks * 3 + 5) % 16;
        const size_t size = 16 * blocks;
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
        test::ReferenceSeal(encrypt, h, ref_counter, ref_x, plaintext.data(), expected.data(),
                            blocks);

        Bytes in_buffer(size + 16), out_buffer(size + 16);
        uint8_t* in = in_buffer.data() + in_offset;
        uint8_t* out = in_place ? in : out_buffer.data() + out_offset;
        if (size > 0) std::memcpy(in, plaintext.data(), size);
        uint8_t counter[16], x[16];
        std::memcpy(counter, counter_start.data(), 16);
        std::memcpy(x, x_start.data(), 16);
        kernel_->seal_blocks(schedule, counter, x, in, out, blocks);
        const std::string where = "key_bytes " + std::to_string(key_bytes) + " blocks " +
                                  std::to_string(blocks) + " start " + std::to_string(start) +
                                  " in_place " + std::to_string(in_place);
        ASSERT_EQ(ToHex(out, size), ToHex(expected)) << where;
        ASSERT_EQ(ToHex(counter, 16), ToHex(ref_counter, 16)) << where;
        ASSERT_EQ(ToHex(x, 16), ToHex(ref_x, 16)) << where;

        uint8_t* opened = in_place ? out : in;
        std::memcpy(counter, counter_start.data(), 16);
        std::memcpy(x, x_start.data(), 16);
        kernel_->open_blocks(schedule, counter, x, out, opened, blocks);
        ASSERT_EQ(ToHex(opened, size), ToHex(plaintext)) << where;
        ASSERT_EQ(ToHex(counter, 16), ToHex(ref_counter, 16)) << where;
        ASSERT_EQ(ToHex(x, 16), ToHex(ref_x, 16)) << where;
      }
    }
  }
}

// Every tail length against a guard page: the kernels' last, partial vectors must
// neither read nor write a byte past the buffers.
TEST_P(KernelTest, StaysInsideBuffers) {
  std::mt19937 rng(4);
  for (size_t key_bytes : {16, 32}) {
    const KeySchedule schedule = Expand(RandomBytes(rng, key_bytes));
    for (size_t blocks : {1, 2, 3, 4, 5, 7, 8, 9, 13, 15, 16, 17, 23, 31, 32, 33, 45}) {
      const size_t size = 16 * blocks;
      GuardedBuffer in(size), out(size), opened(size);
      const Bytes plaintext = RandomBytes(rng, size);
      std::memcpy(in.data(), plaintext.data(), size);
      uint8_t counter[16] = {}, x[16] = {};
      kernel_->seal_blocks(schedule, counter, x, in.data(), out.data(), blocks);
      std::memset(counter, 0, 16);
      std::memset(x, 0, 16);
      kernel_->open_blocks(schedule, counter, x, out.data(), opened.data(), blocks);
      ASSERT_EQ(ToHex(opened.data(), size), ToHex(plaintext)) << "blocks " << blocks;
      kernel_->ghash(schedule, x, out.data(), blocks);
    }
  }
}

// Long enough for many main-loop iterations, with the counter wrapping in the
// middle of one.
TEST_P(KernelTest, SealAndOpenWholeRangeAtOnce) {
  std::mt19937 rng(5);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const KeySchedule schedule = Expand(key);
    const test::ReferenceAes aes(key);
    uint8_t h[16] = {};
    aes.Encrypt(h, h);
    const size_t blocks = 1000;
    const Bytes plaintext = RandomBytes(rng, 16 * blocks);
    Bytes counter_start = RandomBytes(rng, 16);
    counter_start[12] = counter_start[13] = counter_start[14] = 0xff;
    counter_start[15] = 0x07;  // wraps after 249 blocks, inside a group
    const Bytes x_start = RandomBytes(rng, 16);
    Bytes expected(16 * blocks), expected_counter = counter_start, expected_x = x_start;
    test::ReferenceSeal(aes.AsBlockCipher(), h, expected_counter.data(), expected_x.data(),
                        plaintext.data(), expected.data(), blocks);
    Bytes buffer = plaintext;
    uint8_t counter[16], x[16];
    std::memcpy(counter, counter_start.data(), 16);
    std::memcpy(x, x_start.data(), 16);
    kernel_->seal_blocks(schedule, counter, x, buffer.data(), buffer.data(), blocks);
    ASSERT_EQ(ToHex(buffer), ToHex(expected));
    ASSERT_EQ(ToHex(counter, 16), ToHex(expected_counter));
    ASSERT_EQ(ToHex(x, 16), ToHex(expected_x));
    std::memcpy(counter, counter_start.data(), 16);
    std::memcpy(x, x_start.data(), 16);
    kernel_->open_blocks(schedule, counter, x, buffer.data(), buffer.data(), blocks);
    ASSERT_EQ(ToHex(buffer), ToHex(plaintext));
    ASSERT_EQ(ToHex(counter, 16), ToHex(expected_counter));
    ASSERT_EQ(ToHex(x, 16), ToHex(expected_x));
  }
}

}  // namespace
}  // namespace sealbox::crypto::kernel
