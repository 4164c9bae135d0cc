#ifndef SEALBOX_CRYPTO_ARMV8_NEON_ARMV8_NEON_H_
#define SEALBOX_CRYPTO_ARMV8_NEON_ARMV8_NEON_H_

#include "crypto/kernel/kernel.h"

namespace sealbox::crypto::kernel {

// Constant-time AES-GCM with plain ARMv8 NEON (ASIMD, which every AArch64 Linux CPU
// has): AES with the S-box in registers read by tbl/tbx, GHASH from 8-bit
// polynomial multiplies. For cores without the crypto extensions (Cortex-A53/A72
// parts such as the Raspberry Pi's). Defined only in AArch64 builds.
extern const Kernel kArmv8NeonKernel;

}  // namespace sealbox::crypto::kernel

#endif  // SEALBOX_CRYPTO_ARMV8_NEON_ARMV8_NEON_H_
