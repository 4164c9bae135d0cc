#include "crypto/dispatch/cpu_features.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace sealbox::crypto {
namespace {

// Each feature's name and its field, one table for printing and for hiding.
const std::vector<std::pair<const char*, bool CpuFeatures::*>>& FeatureTable() {
  static const auto* table = new std::vector<std::pair<const char*, bool CpuFeatures::*>>{
      {"aesni", &CpuFeatures::x86_aesni},   {"pclmulqdq", &CpuFeatures::x86_pclmulqdq},
      {"avx", &CpuFeatures::x86_avx},       {"avx2", &CpuFeatures::x86_avx2},
      {"vaes", &CpuFeatures::x86_vaes},     {"vpclmulqdq", &CpuFeatures::x86_vpclmulqdq},
      {"avx512", &CpuFeatures::x86_avx512}, {"sse42", &CpuFeatures::x86_sse42},
      {"aes", &CpuFeatures::arm_aes},       {"pmull", &CpuFeatures::arm_pmull},
      {"sha3", &CpuFeatures::arm_sha3},     {"neon", &CpuFeatures::arm_neon},
      {"crc32", &CpuFeatures::arm_crc32},
  };
  return *table;
}

#if defined(__x86_64__)
uint64_t ReadXcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t{edx} << 32) | eax;
}
#endif

// Bit i set: feature i of FeatureTable() is hidden by the test hook.
std::atomic<uint32_t> hidden_mask{0};

absl::StatusOr<uint32_t> ParseNames(absl::string_view names) {
  uint32_t mask = 0;
  for (absl::string_view name : absl::StrSplit(names, ',', absl::SkipEmpty())) {
    name = absl::StripAsciiWhitespace(name);
    bool found = false;
    for (size_t i = 0; i < FeatureTable().size(); ++i) {
      if (name == FeatureTable()[i].first) {
        mask |= uint32_t{1} << i;
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown CPU feature to hide: \"", name, "\""));
    }
  }
  return mask;
}

void ApplyMask(uint32_t mask, CpuFeatures& features) {
  for (size_t i = 0; i < FeatureTable().size(); ++i) {
    if (mask & (uint32_t{1} << i)) features.*(FeatureTable()[i].second) = false;
  }
}

}  // namespace

std::string CpuFeatures::ToString() const {
  std::vector<std::string> present;
  for (const auto& [name, field] : FeatureTable()) {
    if (this->*field) present.push_back(name);
  }
  return absl::StrJoin(present, " ");
}

CpuFeatures DetectCpuFeatures() {
  CpuFeatures f;
#if defined(__x86_64__)
  unsigned eax, ebx, ecx, edx;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    f.x86_aesni = (ecx >> 25) & 1;
    f.x86_pclmulqdq = (ecx >> 1) & 1;
    f.x86_sse42 = (ecx >> 20) & 1;
    const bool osxsave = (ecx >> 27) & 1;
    const bool avx = (ecx >> 28) & 1;
    const uint64_t xcr0 = osxsave ? ReadXcr0() : 0;
    const bool os_ymm = (xcr0 & 0x6) == 0x6;    // XMM and YMM state
    const bool os_zmm = (xcr0 & 0xe6) == 0xe6;  // plus opmask and ZMM state
    f.x86_avx = avx && os_ymm;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
      f.x86_avx2 = f.x86_avx && ((ebx >> 5) & 1);
      f.x86_vaes = f.x86_avx && ((ecx >> 9) & 1);
      f.x86_vpclmulqdq = f.x86_avx && ((ecx >> 10) & 1);
      const bool avx512f = (ebx >> 16) & 1;
      const bool avx512bw = (ebx >> 30) & 1;
      const bool avx512vl = (ebx >> 31) & 1;
      f.x86_avx512 = os_zmm && avx512f && avx512bw && avx512vl;
    }
  }
#elif defined(__aarch64__) && defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  f.arm_neon = (hwcap & HWCAP_ASIMD) != 0;
  f.arm_aes = (hwcap & HWCAP_AES) != 0;
  f.arm_pmull = (hwcap & HWCAP_PMULL) != 0;
  f.arm_sha3 = (hwcap & HWCAP_SHA3) != 0;
  f.arm_crc32 = (hwcap & HWCAP_CRC32) != 0;
#endif
  return f;
}

absl::Status HideCpuFeaturesForTesting(absl::string_view names) {
  absl::StatusOr<uint32_t> mask = ParseNames(names);
  if (!mask.ok()) return mask.status();
  hidden_mask.store(*mask);
  return absl::OkStatus();
}

CpuFeatures GetCpuFeatures() {
  // cpuid/getauxval once. The environment hook lets a whole test binary run as if
  // on an older CPU; an unknown name there is reported once and otherwise ignored.
  static const CpuFeatures detected = [] {
    CpuFeatures f = DetectCpuFeatures();
    if (const char* env = std::getenv("SEALBOX_HIDE_CPU_FEATURES")) {
      absl::StatusOr<uint32_t> mask = ParseNames(env);
      if (mask.ok()) {
        ApplyMask(*mask, f);
      } else {
        std::fprintf(stderr, "sealbox: SEALBOX_HIDE_CPU_FEATURES: %s\n",
                     std::string(mask.status().message()).c_str());
      }
    }
    return f;
  }();
  CpuFeatures f = detected;
  ApplyMask(hidden_mask.load(), f);
  return f;
}

}  // namespace sealbox::crypto
