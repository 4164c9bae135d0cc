// The dispatch decision table, the operator override and the feature-hiding hook.
#include "crypto/dispatch/dispatch.h"

#include <cstdlib>
#include <initializer_list>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

CpuFeatures NoFeatures() { return CpuFeatures{}; }

// One row of an architecture's decision table: what the CPU reports, what must win.
struct Decision {
  CpuFeatures features;
  const char* expected;
};

void ExpectDecisions(std::initializer_list<Decision> table) {
  for (const Decision& row : table) {
    EXPECT_STREQ(BestKernel(row.features).name, row.expected)
        << "features: " << row.features.ToString();
  }
}

class DispatchTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv(kImplementationEnvVar); }
  void TearDown() override {
    unsetenv(kImplementationEnvVar);
    ASSERT_TRUE(HideCpuFeaturesForTesting("").ok());
  }
};

TEST_F(DispatchTest, EveryImplementationIsListedOnce) {
#if defined(__aarch64__)
  EXPECT_THAT(AllImplementations(),
              ElementsAre("armv8_ce_eor3", "armv8_ce", "armv8_neon", "portable", "table"));
#elif defined(__x86_64__)
  EXPECT_THAT(AllImplementations(), ElementsAre("x86_vaes_avx512", "x86_vaes_avx2", "x86_aesni_avx",
                                                "x86_aesni", "portable", "table"));
#else
  EXPECT_THAT(AllImplementations(), ElementsAre("portable", "table"));
#endif
}

#if defined(__x86_64__)
// Feature sets of real CPU families, as cpuid and XGETBV report them.
CpuFeatures X86(bool aesni, bool pclmul, bool avx2, bool vaes, bool avx512) {
  CpuFeatures f;
  f.x86_aesni = aesni;
  f.x86_pclmulqdq = pclmul;
  f.x86_avx = avx2;
  f.x86_avx2 = avx2;
  f.x86_vaes = vaes;
  f.x86_vpclmulqdq = vaes;
  f.x86_avx512 = avx512;
  return f;
}

// The x86-64 decision table, from cpuid (and XGETBV for the OS's AVX state).
TEST_F(DispatchTest, X86DecisionTable) {
  ExpectDecisions({
      {X86(true, true, true, true, true), "x86_vaes_avx512"},  // Ice Lake+, Zen 4
      {X86(true, true, true, true, false), "x86_vaes_avx2"},   // Zen 3, Alder Lake
      {X86(true, true, true, false, true), "x86_aesni_avx"},   // Skylake-SP
      {X86(true, true, true, false, false), "x86_aesni_avx"},  // Haswell, Zen 2
      {X86(true, true, false, false, false), "x86_aesni"},     // Westmere
      {X86(true, false, false, false, false), "portable"},     // AES-NI alone
      {X86(false, true, true, false, false), "portable"},
      {X86(false, false, false, false, false), "portable"},  // qemu64
  });
  // VAES without VPCLMULQDQ, or without the OS saving YMM state, is not enough.
  CpuFeatures no_vpclmul = X86(true, true, true, true, false);
  no_vpclmul.x86_vpclmulqdq = false;
  EXPECT_STREQ(BestKernel(no_vpclmul).name, "x86_aesni_avx");
  CpuFeatures no_avx = X86(true, true, true, true, true);
  no_avx.x86_avx = false;
  EXPECT_STREQ(BestKernel(no_avx).name, "x86_aesni");
}

TEST_F(DispatchTest, Avx512KernelNeedsAvx512EvenWhenNamed) {
  absl::StatusOr<const kernel::Kernel*> chosen =
      SelectKernel("x86_vaes_avx512", X86(true, true, true, true, false));
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(chosen.status().message()),
              HasSubstr("x86_vaes_avx2, x86_aesni_avx, x86_aesni, portable"));
}
#endif

#if defined(__aarch64__)
CpuFeatures Arm(bool aes, bool pmull, bool sha3, bool neon) {
  CpuFeatures f;
  f.arm_aes = aes;
  f.arm_pmull = pmull;
  f.arm_sha3 = sha3;
  f.arm_neon = neon;
  return f;
}

// The AArch64 decision table, from getauxval(AT_HWCAP)'s AES, PMULL and SHA3 bits.
TEST_F(DispatchTest, Aarch64DecisionTable) {
  ExpectDecisions({
      {Arm(true, true, true, true), "armv8_ce_eor3"},  // Neoverse N2/V1, Apple
      {Arm(true, true, false, true), "armv8_ce"},      // Cortex-A53/A57/A72, N1
      {Arm(true, false, true, true), "armv8_neon"},    // AES without PMULL
      {Arm(false, true, false, true), "armv8_neon"},
      {Arm(false, false, false, true), "armv8_neon"},  // Raspberry Pi 4
      {Arm(false, false, false, false), "portable"},
  });
}

TEST_F(DispatchTest, Eor3KernelNeedsSha3EvenWhenNamed) {
  absl::StatusOr<const kernel::Kernel*> chosen =
      SelectKernel("armv8_ce_eor3", Arm(true, true, false, true));
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(chosen.status().message()), HasSubstr("armv8_ce, armv8_neon"));
}
#endif

TEST_F(DispatchTest, BareCpuGetsPortableByDefault) {
  EXPECT_STREQ(BestKernel(NoFeatures()).name, "portable");
  EXPECT_TRUE(BestKernel(NoFeatures()).constant_time);
}

TEST_F(DispatchTest, DefaultIsAlwaysConstantTime) {
  CpuFeatures all;
  all.x86_aesni = all.x86_pclmulqdq = all.x86_avx = all.x86_avx2 = true;
  all.x86_vaes = all.x86_vpclmulqdq = all.x86_avx512 = true;
  all.arm_aes = all.arm_pmull = all.arm_sha3 = all.arm_neon = true;
  for (const CpuFeatures& features : {NoFeatures(), all}) {
    EXPECT_TRUE(BestKernel(features).constant_time);
    absl::StatusOr<const kernel::Kernel*> chosen = SelectKernel("", features);
    ASSERT_TRUE(chosen.ok());
    EXPECT_TRUE((*chosen)->constant_time);
  }
}

TEST_F(DispatchTest, TableIsChosenOnlyByName) {
  absl::StatusOr<const kernel::Kernel*> chosen = SelectKernel("table", NoFeatures());
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_STREQ((*chosen)->name, "table");
  EXPECT_FALSE((*chosen)->constant_time);
}

TEST_F(DispatchTest, UnknownNameIsAClearError) {
  absl::StatusOr<const kernel::Kernel*> chosen = SelectKernel("aes-fast", NoFeatures());
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(chosen.status().message()),
              HasSubstr("unknown AES-GCM implementation \"aes-fast\""));
  EXPECT_THAT(std::string(chosen.status().message()), HasSubstr("portable, table"));
}

TEST_F(DispatchTest, EnvironmentOverridesTheDefault) {
  setenv(kImplementationEnvVar, "table", 1);
  absl::StatusOr<const kernel::Kernel*> chosen = SelectKernel("", NoFeatures());
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_STREQ((*chosen)->name, "table");
}

TEST_F(DispatchTest, BadEnvironmentValueNamesTheVariable) {
  setenv(kImplementationEnvVar, "nonsense", 1);
  absl::StatusOr<const kernel::Kernel*> chosen = SelectKernel("", NoFeatures());
  ASSERT_FALSE(chosen.ok());
  EXPECT_THAT(std::string(chosen.status().message()), HasSubstr(kImplementationEnvVar));
}

TEST_F(DispatchTest, ExplicitNameBeatsTheEnvironment) {
  setenv(kImplementationEnvVar, "table", 1);
  absl::StatusOr<const kernel::Kernel*> chosen = SelectKernel("portable", NoFeatures());
  ASSERT_TRUE(chosen.ok());
  EXPECT_STREQ((*chosen)->name, "portable");
}

TEST_F(DispatchTest, SupportedListStartsWithTheDefault) {
  std::vector<std::string> supported = SupportedImplementations(NoFeatures());
  ASSERT_FALSE(supported.empty());
  EXPECT_EQ(supported.front(), "portable");
}

TEST_F(DispatchTest, HidingFeaturesRemovesThemFromDetection) {
  // Features hidden by SEALBOX_HIDE_CPU_FEATURES (tools/dev sets it for some runs)
  // stay hidden for the whole process; the hook hides more on top of them.
  const std::string before = GetCpuFeatures().ToString();
  ASSERT_TRUE(HideCpuFeaturesForTesting("aesni,pclmulqdq,avx,avx2,vaes,vpclmulqdq,"
                                        "avx512,sse42,aes,pmull,sha3,neon,crc32")
                  .ok());
  CpuFeatures hidden = GetCpuFeatures();
  EXPECT_EQ(hidden.ToString(), "");
  ASSERT_TRUE(HideCpuFeaturesForTesting("").ok());
  EXPECT_EQ(GetCpuFeatures().ToString(), before);
  if (std::getenv("SEALBOX_HIDE_CPU_FEATURES") == nullptr) {
    EXPECT_EQ(before, DetectCpuFeatures().ToString());
  }
}

TEST_F(DispatchTest, HidingAnUnknownFeatureIsAnError) {
  absl::Status status = HideCpuFeaturesForTesting("aesni,warp-drive");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("warp-drive"));
}

}  // namespace
}  // namespace sealbox::crypto
