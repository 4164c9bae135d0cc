// What the CPU can do, detected once per process.
#ifndef SEALBOX_CRYPTO_DISPATCH_CPU_FEATURES_H_
#define SEALBOX_CRYPTO_DISPATCH_CPU_FEATURES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sealbox::crypto {

struct CpuFeatures {
  // x86-64 (cpuid, with XGETBV for the OS-enabled register state).
  bool x86_aesni = false;
  bool x86_pclmulqdq = false;
  bool x86_avx = false;  // and the OS saves YMM state
  bool x86_avx2 = false;
  bool x86_vaes = false;
  bool x86_vpclmulqdq = false;
  bool x86_avx512 = false;  // F + BW + VL, and the OS saves ZMM state
  bool x86_sse42 = false;   // the `crc32` instruction (CRC32C)
  // AArch64 (getauxval(AT_HWCAP)).
  bool arm_aes = false;
  bool arm_pmull = false;
  bool arm_sha3 = false;
  bool arm_neon = false;
  bool arm_crc32 = false;  // the CRC32 instructions (CRC32C)

  // Space-separated names of the features present, e.g. "aesni pclmulqdq avx2".
  std::string ToString() const;
};

// The features of this CPU (detected once per process), less any hidden for testing.
CpuFeatures GetCpuFeatures();

// Test hook: pretend the named features (names as in ToString(), comma separated)
// are missing, so one machine exercises every dispatch path. Replaces any earlier
// call's set; affects keys created afterwards. The environment variable
// SEALBOX_HIDE_CPU_FEATURES does the same for a whole process (read once).
// Returns an error for an unknown name.
absl::Status HideCpuFeaturesForTesting(absl::string_view names);

// Detection without the cache or the hook, for the dispatch test.
CpuFeatures DetectCpuFeatures();

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_DISPATCH_CPU_FEATURES_H_
