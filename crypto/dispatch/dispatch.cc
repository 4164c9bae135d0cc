#include "crypto/dispatch/dispatch.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "crypto/armv8_ce/armv8_ce.h"
#include "crypto/armv8_neon/armv8_neon.h"
#include "crypto/portable/portable.h"
#include "crypto/table/table.h"
#include "crypto/x86_aesni/x86_aesni.h"
#include "crypto/x86_vaes/x86_vaes.h"

namespace sealbox::crypto {
namespace {

struct Entry {
  const kernel::Kernel* kernel;
  // Can this CPU run it?
  bool (*capable)(const CpuFeatures&);
  // May it be chosen without being named? Only constant-time kernels are.
  bool automatic;
};

bool Always(const CpuFeatures&) { return true; }

#if defined(__x86_64__)
bool HasAesniPclmul(const CpuFeatures& f) { return f.x86_aesni && f.x86_pclmulqdq; }
bool HasAesniPclmulAvx(const CpuFeatures& f) { return HasAesniPclmul(f) && f.x86_avx; }
bool HasVaes256(const CpuFeatures& f) {
  return HasAesniPclmulAvx(f) && f.x86_avx2 && f.x86_vaes && f.x86_vpclmulqdq;
}
bool HasVaes512(const CpuFeatures& f) { return HasVaes256(f) && f.x86_avx512; }
#endif

#if defined(__aarch64__)
bool HasAesPmullSha3(const CpuFeatures& f) { return f.arm_aes && f.arm_pmull && f.arm_sha3; }
bool HasAesPmull(const CpuFeatures& f) { return f.arm_aes && f.arm_pmull; }
bool HasNeon(const CpuFeatures& f) { return f.arm_neon; }
#endif

// Best first. The first capable automatic entry is the default. A kernel for
// another architecture is not built into this binary at all (its library is empty
// there), hence the #if around each group.
const Entry kEntries[] = {
#if defined(__x86_64__)
    {&kernel::kX86VaesAvx512Kernel, HasVaes512, true},
    {&kernel::kX86VaesAvx2Kernel, HasVaes256, true},
    {&kernel::kX86AesniAvxKernel, HasAesniPclmulAvx, true},
    {&kernel::kX86AesniKernel, HasAesniPclmul, true},
#endif
#if defined(__aarch64__)
    {&kernel::kArmv8CeEor3Kernel, HasAesPmullSha3, true},
    {&kernel::kArmv8CeKernel, HasAesPmull, true},
    // Cores without the crypto extensions (Raspberry Pi 4 class).
    {&kernel::kArmv8NeonKernel, HasNeon, true},
#endif
    {&kernel::kPortableKernel, Always, true},
    // Not constant time. On the x86-64 development machine it is slower than
    // portable for bulk data (docs/PERFORMANCE.md); it is for small cores where
    // table GHASH beats 64-bit multiplies, and only when an operator names it.
    {&kernel::kTableKernel, Always, false},
};

const Entry* FindEntry(absl::string_view name) {
  for (const Entry& entry : kEntries) {
    if (name == entry.kernel->name) return &entry;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> AllImplementations() {
  std::vector<std::string> names;
  for (const Entry& entry : kEntries) names.push_back(entry.kernel->name);
  return names;
}

std::vector<std::string> SupportedImplementations(const CpuFeatures& features) {
  std::vector<std::string> names;
  for (const Entry& entry : kEntries) {
    if (entry.capable(features)) names.push_back(entry.kernel->name);
  }
  return names;
}

std::vector<std::string> SupportedImplementations() {
  return SupportedImplementations(GetCpuFeatures());
}

const kernel::Kernel& BestKernel(const CpuFeatures& features) {
  for (const Entry& entry : kEntries) {
    if (entry.automatic && entry.capable(features)) return *entry.kernel;
  }
  return kernel::kPortableKernel;  // unreachable: portable runs everywhere
}

absl::StatusOr<const kernel::Kernel*> SelectKernel(absl::string_view name,
                                                   const CpuFeatures& features) {
  absl::string_view source = "implementation";
  if (name.empty()) {
    const char* env = std::getenv(kImplementationEnvVar);
    if (env == nullptr || *env == '\0') return &BestKernel(features);
    name = env;
    source = kImplementationEnvVar;
  }
  const Entry* entry = FindEntry(name);
  if (entry == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown AES-GCM ", source, " \"", name,
                     "\"; built in: ", absl::StrJoin(AllImplementations(), ", ")));
  }
  if (!entry->capable(features)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "AES-GCM ", source, " \"", name, "\" needs CPU features this machine lacks",
        " (has: ", features.ToString(),
        "); supported here: ", absl::StrJoin(SupportedImplementations(features), ", ")));
  }
  return entry->kernel;
}

absl::StatusOr<const kernel::Kernel*> SelectKernel(absl::string_view name) {
  return SelectKernel(name, GetCpuFeatures());
}

}  // namespace sealbox::crypto
