#include "crypto/crc32c/crc32c.h"

#include <cstdio>
#include <cstdlib>

#include "crypto/crc32c/crc32c_kernels.h"
#include "crypto/dispatch/cpu_features.h"

namespace sealbox::crypto {
namespace {

using Extend = uint32_t (*)(uint32_t, const uint8_t*, size_t);

struct Implementation {
  const char* name;
  Extend extend;
  bool (*supported)(const CpuFeatures&);
};

// In order of preference, the last one always supported.
const std::vector<Implementation>& Implementations() {
  static const auto* all = new std::vector<Implementation> {
#if defined(__x86_64__)
    {"x86_sse42_pclmul", crc32c_internal::ExtendX86Pclmul,
     [](const CpuFeatures& f) { return f.x86_sse42 && f.x86_pclmulqdq; }},
        {"x86_sse42", crc32c_internal::ExtendX86Sse42,
         [](const CpuFeatures& f) { return f.x86_sse42; }},
#elif defined(__aarch64__)
    {"armv8_crc32", crc32c_internal::ExtendArmv8Crc32,
     [](const CpuFeatures& f) { return f.arm_crc32; }},
#endif
        {"portable", crc32c_internal::ExtendPortable, [](const CpuFeatures&) { return true; }},
  };
  return *all;
}

// Chosen once per process (CPU features hidden through SEALBOX_HIDE_CPU_FEATURES
// count as missing).
const Implementation& Chosen() {
  static const Implementation* chosen = [] {
    const CpuFeatures features = GetCpuFeatures();
    for (const Implementation& impl : Implementations()) {
      if (impl.supported(features)) return &impl;
    }
    return &Implementations().back();
  }();
  return *chosen;
}

}  // namespace

uint32_t Crc32c(absl::Span<const uint8_t> data) { return ExtendCrc32c(0, data); }

uint32_t Crc32c(absl::string_view data) {
  return ExtendCrc32c(
      0, absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size()));
}

uint32_t ExtendCrc32c(uint32_t crc, absl::Span<const uint8_t> data) {
  return Chosen().extend(crc, data.data(), data.size());
}

const char* Crc32cImplementation() { return Chosen().name; }

std::vector<std::string> SupportedCrc32cImplementations() {
  const CpuFeatures features = DetectCpuFeatures();
  std::vector<std::string> names;
  for (auto it = Implementations().rbegin(); it != Implementations().rend(); ++it) {
    if (it->supported(features)) names.push_back(it->name);
  }
  return names;
}

uint32_t ExtendCrc32cWith(const std::string& implementation, uint32_t crc,
                          absl::Span<const uint8_t> data) {
  for (const Implementation& impl : Implementations()) {
    if (implementation == impl.name) return impl.extend(crc, data.data(), data.size());
  }
  std::fprintf(stderr, "ExtendCrc32cWith: no implementation \"%s\"\n", implementation.c_str());
  std::abort();
}

}  // namespace sealbox::crypto
