// The automatic choice on the CPU this test runs on, as opposed to dispatch_test's
// made-up feature sets. tools/dev runs it on several CPUs (QEMU models, and with
// features hidden through SEALBOX_HIDE_CPU_FEATURES) and says through
// SEALBOX_EXPECT_DEFAULT_IMPL which implementation each must get.
//
// It also checks detection against the CPU itself: an instruction of every
// feature reported is executed, and one of every feature not reported must trap
// (SIGILL), so a wrong HWCAP or cpuid bit, or a QEMU CPU model not taking effect,
// shows up here rather than as a crash in a kernel.
#include <setjmp.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "crypto/dispatch/cpu_features.h"
#include "crypto/dispatch/dispatch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

// One instruction of each feature. GCC only emits them inside a function compiled
// for that feature (the target attribute); the assembler wants the same on AArch64.
#if defined(__aarch64__)
void ProbeNeon() { asm volatile("add v0.16b, v0.16b, v0.16b" ::: "v0"); }
__attribute__((target("+aes"))) void ProbeAes() { asm volatile("aese v0.16b, v0.16b" ::: "v0"); }
__attribute__((target("+aes"))) void ProbePmull() {
  asm volatile("pmull v0.1q, v0.1d, v0.1d" ::: "v0");
}
__attribute__((target("arch=armv8.2-a+sha3"))) void ProbeSha3() {
  asm volatile("eor3 v0.16b, v0.16b, v0.16b, v0.16b" ::: "v0");
}
__attribute__((target("+crc"))) void ProbeCrc32() { asm volatile("crc32cx w0, w0, x0" ::: "x0"); }
#elif defined(__x86_64__)
void ProbeAesni() { asm volatile("aesenc %%xmm0, %%xmm0" ::: "xmm0"); }
void ProbePclmulqdq() { asm volatile("pclmulqdq $0, %%xmm0, %%xmm0" ::: "xmm0"); }
void ProbeSse42() { asm volatile("crc32q %%rax, %%rax" ::: "rax"); }
void ProbeAvx() { asm volatile("vxorps %%ymm0, %%ymm0, %%ymm0" ::: "xmm0"); }
void ProbeAvx2() { asm volatile("vpaddd %%ymm0, %%ymm0, %%ymm0" ::: "xmm0"); }
void ProbeVaes() { asm volatile("vaesenc %%ymm0, %%ymm0, %%ymm0" ::: "xmm0"); }
void ProbeVpclmulqdq() { asm volatile("vpclmulqdq $0, %%ymm0, %%ymm0, %%ymm0" ::: "xmm0"); }
// AVX-512 F (zmm), BW (byte ops) and VL (ymm16-31 through EVEX): all three count.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void ProbeAvx512() {
  asm volatile(
      "vpxord %%zmm0, %%zmm0, %%zmm0\n"
      "vpaddb %%ymm16, %%ymm16, %%ymm16" ::
          : "xmm0", "xmm16");
}
#endif

struct Feature {
  const char* name;  // as in CpuFeatures::ToString() and SEALBOX_HIDE_CPU_FEATURES
  bool CpuFeatures::*field;
  void (*probe)();
};

const std::vector<Feature>& FeaturesOfThisArchitecture() {
  static const auto* features = new std::vector<Feature> {
#if defined(__aarch64__)
    {"neon", &CpuFeatures::arm_neon, ProbeNeon}, {"aes", &CpuFeatures::arm_aes, ProbeAes},
        {"pmull", &CpuFeatures::arm_pmull, ProbePmull}, {"sha3", &CpuFeatures::arm_sha3, ProbeSha3},
        {"crc32", &CpuFeatures::arm_crc32, ProbeCrc32},
#elif defined(__x86_64__)
    {"aesni", &CpuFeatures::x86_aesni, ProbeAesni},
        {"pclmulqdq", &CpuFeatures::x86_pclmulqdq, ProbePclmulqdq},
        {"avx", &CpuFeatures::x86_avx, ProbeAvx}, {"avx2", &CpuFeatures::x86_avx2, ProbeAvx2},
        {"vaes", &CpuFeatures::x86_vaes, ProbeVaes},
        {"vpclmulqdq", &CpuFeatures::x86_vpclmulqdq, ProbeVpclmulqdq},
        {"avx512", &CpuFeatures::x86_avx512, ProbeAvx512},
        {"sse42", &CpuFeatures::x86_sse42, ProbeSse42},
#endif
  };
  return *features;
}

// Runs `probe`; false if the CPU refused the instruction (SIGILL).
sigjmp_buf probe_jump;
void OnSigill(int) { siglongjmp(probe_jump, 1); }

bool Executes(void (*probe)()) {
  struct sigaction on_sigill = {}, previous = {};
  on_sigill.sa_handler = OnSigill;
  sigemptyset(&on_sigill.sa_mask);
  sigaction(SIGILL, &on_sigill, &previous);
  bool executed = false;
  if (sigsetjmp(probe_jump, /*savemask=*/1) == 0) {
    probe();
    executed = true;
  }
  sigaction(SIGILL, &previous, nullptr);
  return executed;
}

std::string EnvOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

class DefaultChoiceTest : public ::testing::Test {
 protected:
  // The automatic choice, not an operator's.
  void SetUp() override { unsetenv(kImplementationEnvVar); }
};

TEST_F(DefaultChoiceTest, DetectionMatchesWhatTheCpuExecutes) {
  const CpuFeatures detected = DetectCpuFeatures();
  std::printf("detected: %s\n", detected.ToString().c_str());
  for (const Feature& feature : FeaturesOfThisArchitecture()) {
    EXPECT_EQ(detected.*feature.field, Executes(feature.probe))
        << feature.name << ": detected " << (detected.*feature.field ? "yes" : "no")
        << " but the CPU disagrees";
  }
}

TEST_F(DefaultChoiceTest, HiddenFeaturesAndNoOthersAreMissing) {
  std::vector<std::string> hidden =
      absl::StrSplit(EnvOrEmpty("SEALBOX_HIDE_CPU_FEATURES"), ',', absl::SkipEmpty());
  const CpuFeatures detected = DetectCpuFeatures();
  const CpuFeatures reported = GetCpuFeatures();
  std::printf("hidden: %s\nreported: %s\n", absl::StrJoin(hidden, ",").c_str(),
              reported.ToString().c_str());
  for (const Feature& feature : FeaturesOfThisArchitecture()) {
    const bool is_hidden = std::find(hidden.begin(), hidden.end(), feature.name) != hidden.end();
    EXPECT_EQ(reported.*feature.field, detected.*feature.field && !is_hidden) << feature.name;
  }
}

// Holds on any CPU: the default is the first constant-time implementation of the
// supported ones (best first), and runs here.
TEST_F(DefaultChoiceTest, DefaultIsTheBestConstantTimeImplementationSupported) {
  absl::StatusOr<const kernel::Kernel*> chosen = SelectKernel("");
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_TRUE((*chosen)->constant_time);
  EXPECT_EQ(*chosen, &BestKernel(GetCpuFeatures()));

  const std::vector<std::string> supported = SupportedImplementations();
  EXPECT_THAT(supported, ::testing::Contains((*chosen)->name));
  for (const std::string& name : supported) {
    absl::StatusOr<const kernel::Kernel*> kernel = SelectKernel(name);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    if ((*kernel)->constant_time) {
      EXPECT_EQ(name, (*chosen)->name) << "a better constant-time implementation is supported here";
      break;
    }
  }
}

// SEALBOX_EXPECT_DEFAULT_IMPL: the name this CPU's default must have (tools/dev).
TEST_F(DefaultChoiceTest, DefaultIsTheExpectedOne) {
  const std::string expected = EnvOrEmpty("SEALBOX_EXPECT_DEFAULT_IMPL");
  if (expected.empty()) GTEST_SKIP() << "SEALBOX_EXPECT_DEFAULT_IMPL is not set";
  absl::StatusOr<const kernel::Kernel*> chosen = SelectKernel("");
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ((*chosen)->name, expected)
      << "CPU features: " << GetCpuFeatures().ToString()
      << "; supported: " << absl::StrJoin(SupportedImplementations(), ", ")
      << "; QEMU_CPU=" << EnvOrEmpty("QEMU_CPU")
      << " SEALBOX_HIDE_CPU_FEATURES=" << EnvOrEmpty("SEALBOX_HIDE_CPU_FEATURES");
}

}  // namespace
}  // namespace sealbox::crypto
