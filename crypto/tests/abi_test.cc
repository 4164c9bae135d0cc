// Calling-convention test: every function of every kernel this CPU supports is
// called through an assembly trampoline (crypto/testing/abi_check.h) that checks it
// preserved the callee-saved registers and the stack pointer. Compiled kernels
// cannot get this wrong; hand-written assembly can, and the damage (a caller's
// variable silently changed) shows up far away, if at all. Each call's result is
// also compared with a direct call, so the trampoline demonstrably passed the
// arguments through.
//
// The trampoline itself is tested first: a function that clobbers one register on
// purpose must be reported, with that register's name, for every register checked.
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crypto/dispatch/dispatch.h"
#include "crypto/kernel/kernel.h"
#include "crypto/testing/abi_check.h"
#include "crypto/testing/implementations.h"
#include "crypto/testing/test_bytes.h"
#include "gtest/gtest.h"

// sealbox_abi_test_clobber(which) breaks the calling convention on purpose: it
// changes the callee-saved register with trampoline bit `which` (the order of
// test::AbiRegisterName) and returns. Each case is one 8-byte slot of a jump table.
// sealbox_abi_test_allowed_clobber() changes only registers the ABI lets it change.
extern "C" void sealbox_abi_test_clobber(uint64_t which);
extern "C" void sealbox_abi_test_allowed_clobber(void);

// The symbols are global (but hidden): the AArch64 assembler would otherwise
// resolve the GOT entry of a local symbol to the start of its section.
#if defined(__aarch64__)
asm(R"(
        .pushsection .text
        .globl  sealbox_abi_test_clobber, sealbox_abi_test_allowed_clobber
        .hidden sealbox_abi_test_clobber, sealbox_abi_test_allowed_clobber
        .p2align 3
sealbox_abi_test_clobber:
        adr     x9, 1f
        add     x9, x9, x0, lsl #3
        br      x9
        .p2align 3
1:
        .irp    n, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29
        mov     x\n, #1
        ret
        .endr
        .irp    n, 8, 9, 10, 11, 12, 13, 14, 15
        fmov    d\n, xzr
        ret
        .endr
        sub     sp, sp, #16
        ret

// AAPCS64 asks only for the low 64 bits of v8-v15 to be preserved; x9-x18 and
// v16-v31 are the caller's to save.
sealbox_abi_test_allowed_clobber:
        mov     v8.d[1], xzr
        mov     x9, #1
        mov     x15, #1
        movi    v16.2d, #0
        ret
        .popsection
)");
#elif defined(__x86_64__)
asm(R"(
        .pushsection .text
        .globl  sealbox_abi_test_clobber, sealbox_abi_test_allowed_clobber
        .hidden sealbox_abi_test_clobber, sealbox_abi_test_allowed_clobber
        .p2align 3
sealbox_abi_test_clobber:
        lea     1f(%rip), %rax
        lea     (%rax, %rdi, 8), %rax
        jmp     *%rax
        .p2align 3
1:
        .irp    reg, rbx, rbp, r12, r13, r14, r15
        mov     $1, %\reg
        ret
        .p2align 3
        .endr
        pop     %rcx
        sub     $16, %rsp
        jmp     *%rcx

# Every vector register is caller-saved in the System V ABI, and so are rax,
# rcx, rdx, rsi, rdi and r8-r11.
sealbox_abi_test_allowed_clobber:
        pxor    %xmm6, %xmm6
        mov     $1, %r10
        mov     $1, %r11
        ret
        .popsection
)");
#endif

namespace sealbox::crypto {
namespace {

using kernel::Kernel;
using kernel::KeySchedule;
using Block = std::array<uint8_t, 16>;
using test::RandomBytes;

// --- The trampoline ---------------------------------------------------------------

uint64_t recorded_args[6];
void RecordArgs(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f) {
  const uint64_t args[6] = {a, b, c, d, e, f};
  std::memcpy(recorded_args, args, sizeof(args));
}

void DoNothing() {}

TEST(AbiTrampolineTest, PassesSixArgumentsInOrder) {
  EXPECT_EQ(test::AbiCheckedCall(RecordArgs, 1, 2, 3, 0x1234567890abcdef, ~uint64_t{0}, 6), "");
  EXPECT_EQ(recorded_args[0], 1u);
  EXPECT_EQ(recorded_args[1], 2u);
  EXPECT_EQ(recorded_args[2], 3u);
  EXPECT_EQ(recorded_args[3], 0x1234567890abcdefu);
  EXPECT_EQ(recorded_args[4], ~uint64_t{0});
  EXPECT_EQ(recorded_args[5], 6u);
}

TEST(AbiTrampolineTest, WellBehavedFunctionsAreClean) {
  EXPECT_EQ(test::AbiCheckedCall(DoNothing), "");
  EXPECT_EQ(test::AbiCheckedCall(sealbox_abi_test_allowed_clobber), "");
}

TEST(AbiTrampolineTest, ReportsEachClobberedRegisterByName) {
  ASSERT_GT(test::AbiRegisterCount(), 0);
  for (int bit = 0; bit < test::AbiRegisterCount(); ++bit) {
    EXPECT_EQ(test::AbiCheckedCall(sealbox_abi_test_clobber, bit), test::AbiRegisterName(bit));
  }
}

// --- Every kernel this CPU supports -----------------------------------------------

constexpr size_t kBlockCounts[] = {0, 1, 7, 8, 9, 33};
constexpr size_t kMaxBlocks = 33;

class KernelAbiTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<const Kernel*> selected = SelectKernel(GetParam());
    ASSERT_TRUE(selected.ok()) << selected.status();
    kernel_ = *selected;
    // KeySchedule is 4 KiB: on the heap, zeroed so two expansions compare equal.
    schedule_ = std::make_unique<KeySchedule>();
    std::memset(schedule_.get(), 0, sizeof(KeySchedule));
  }

  // Expands a fixed random key of `key_bytes` into schedule_, directly.
  void ExpandDirectly(size_t key_bytes) {
    std::mt19937_64 rng(key_bytes);
    const std::vector<uint8_t> key = RandomBytes(rng, key_bytes);
    kernel_->expand_key(key.data(), key.size(), schedule_.get());
  }

  const Kernel* kernel_ = nullptr;
  std::unique_ptr<KeySchedule> schedule_;
  std::mt19937_64 rng_{0xab1};
};

TEST_P(KernelAbiTest, ExpandKey) {
  for (size_t key_bytes : test::kAesKeySizes) {
    SCOPED_TRACE(testing::Message() << "key_bytes=" << key_bytes);
    std::mt19937_64 rng(key_bytes);
    const std::vector<uint8_t> key = RandomBytes(rng, key_bytes);
    auto checked = std::make_unique<KeySchedule>();
    std::memset(checked.get(), 0, sizeof(KeySchedule));
    EXPECT_EQ(test::AbiCheckedCall(kernel_->expand_key, key.data(), key.size(), checked.get()), "");
    kernel_->expand_key(key.data(), key.size(), schedule_.get());
    EXPECT_EQ(std::memcmp(checked.get(), schedule_.get(), sizeof(KeySchedule)), 0)
        << "the schedule differs from a direct call's";
  }
}

TEST_P(KernelAbiTest, EncryptBlock) {
  for (size_t key_bytes : test::kAesKeySizes) {
    SCOPED_TRACE(testing::Message() << "key_bytes=" << key_bytes);
    ExpandDirectly(key_bytes);
    const Block in = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    Block checked{}, direct{};
    EXPECT_EQ(test::AbiCheckedCall(kernel_->encrypt_block, *schedule_, in.data(), checked.data()),
              "");
    kernel_->encrypt_block(*schedule_, in.data(), direct.data());
    EXPECT_EQ(checked, direct);
  }
}

TEST_P(KernelAbiTest, Ghash) {
  const std::vector<uint8_t> in = RandomBytes(rng_, kMaxBlocks * 16);
  for (size_t key_bytes : test::kAesKeySizes) {
    ExpandDirectly(key_bytes);
    for (size_t blocks : kBlockCounts) {
      SCOPED_TRACE(testing::Message() << "key_bytes=" << key_bytes << " blocks=" << blocks);
      Block checked = {0x5e}, direct = {0x5e};
      EXPECT_EQ(test::AbiCheckedCall(kernel_->ghash, *schedule_, checked.data(), in.data(), blocks),
                "");
      kernel_->ghash(*schedule_, direct.data(), in.data(), blocks);
      EXPECT_EQ(checked, direct);
    }
  }
}

// seal_blocks and open_blocks have the same signature and are checked alike.
void CheckBulk(const char* which, const KeySchedule& schedule, decltype(Kernel::seal_blocks) bulk,
               const std::vector<uint8_t>& in) {
  for (size_t blocks : kBlockCounts) {
    SCOPED_TRACE(testing::Message() << which << " blocks=" << blocks);
    // A counter whose low 32 bits wrap partway through the longer runs.
    const Block counter = {0xc0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0xff, 0xff, 0xff, 0xf0};
    Block checked_counter = counter, direct_counter = counter;
    Block checked_x = {0x5e}, direct_x = {0x5e};
    std::vector<uint8_t> checked_out(blocks * 16), direct_out(blocks * 16);
    EXPECT_EQ(test::AbiCheckedCall(bulk, schedule, checked_counter.data(), checked_x.data(),
                                   in.data(), checked_out.data(), blocks),
              "");
    bulk(schedule, direct_counter.data(), direct_x.data(), in.data(), direct_out.data(), blocks);
    EXPECT_EQ(checked_counter, direct_counter);
    EXPECT_EQ(checked_x, direct_x);
    EXPECT_EQ(checked_out, direct_out);
  }
}

TEST_P(KernelAbiTest, SealBlocks) {
  const std::vector<uint8_t> in = RandomBytes(rng_, kMaxBlocks * 16);
  for (size_t key_bytes : test::kAesKeySizes) {
    SCOPED_TRACE(testing::Message() << "key_bytes=" << key_bytes);
    ExpandDirectly(key_bytes);
    CheckBulk("seal_blocks", *schedule_, kernel_->seal_blocks, in);
  }
}

TEST_P(KernelAbiTest, OpenBlocks) {
  const std::vector<uint8_t> in = RandomBytes(rng_, kMaxBlocks * 16);
  for (size_t key_bytes : test::kAesKeySizes) {
    SCOPED_TRACE(testing::Message() << "key_bytes=" << key_bytes);
    ExpandDirectly(key_bytes);
    CheckBulk("open_blocks", *schedule_, kernel_->open_blocks, in);
  }
}

INSTANTIATE_TEST_SUITE_P(Impl, KernelAbiTest, ::testing::ValuesIn(test::ImplementationsUnderTest()),
                         test::ImplementationTestName);

}  // namespace
}  // namespace sealbox::crypto
