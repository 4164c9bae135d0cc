// What only the armv8_ce kernels have: every assembly entry point, called
// directly, keeps the AAPCS64 callee-saved registers. (Their results against
// published vectors and reference code, guard pages included, are checked with
// every other kernel's by //crypto/tests:kernel_test.) AArch64 only; the EOR3
// kernel's cases skip themselves on CPUs without SHA3.
#include <sys/auxv.h>

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
void sealbox_armv8_ce_seal_blocks(const uint8_t*, uint8_t*, uint8_t*, const uint8_t*, uint8_t*,
                                  size_t);
void sealbox_armv8_ce_open_blocks(const uint8_t*, uint8_t*, uint8_t*, const uint8_t*, uint8_t*,
                                  size_t);
void sealbox_armv8_ce_seal_blocks_eor3(const uint8_t*, uint8_t*, uint8_t*, const uint8_t*, uint8_t*,
                                       size_t);
void sealbox_armv8_ce_open_blocks_eor3(const uint8_t*, uint8_t*, uint8_t*, const uint8_t*, uint8_t*,
                                       size_t);
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
};

TEST_P(Armv8CeKernelTest, Identity) {
  EXPECT_STREQ(kernel().name, GetParam().name);
  EXPECT_TRUE(kernel().constant_time);
}

INSTANTIATE_TEST_SUITE_P(Kernels, Armv8CeKernelTest,
                         testing::Values(KernelCase{&kArmv8CeKernel, "armv8_ce",
                                                    kHwcapAes | kHwcapPmull},
                                         KernelCase{&kArmv8CeEor3Kernel, "armv8_ce_eor3",
                                                    kHwcapAes | kHwcapPmull | kHwcapSha3}),
                         [](const testing::TestParamInfo<KernelCase>& info) {
                           return std::string(info.param.kernel == &kArmv8CeKernel ? "Plain"
                                                                                   : "Eor3");
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
    EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_encrypt_block, keys, in.data(), out.data()), "");
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
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_ghash_eor3, keys, x, in.data(), blocks), "")
          << "ghash_eor3 " << blocks;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_seal_blocks_eor3, keys, counter, x, in.data(),
                               out.data(), blocks),
                "")
          << "seal_eor3 " << blocks;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_open_blocks_eor3, keys, counter, x, in.data(),
                               out.data(), blocks),
                "")
          << "open_eor3 " << blocks;
    }
  }
}

}  // namespace
}  // namespace sealbox::crypto::kernel
