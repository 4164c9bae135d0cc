#ifndef SEALBOX_CRYPTO_ARMV8_CE_ARMV8_CE_H_
#define SEALBOX_CRYPTO_ARMV8_CE_ARMV8_CE_H_

#include "crypto/kernel/kernel.h"

namespace sealbox::crypto::kernel {

// AES-GCM with the AArch64 Crypto Extensions: AESE/AESMC for AES, PMULL for
// GHASH, eight blocks per main-loop iteration with the two interleaved. Needs
// AES and PMULL. Defined only in AArch64 builds (--config=aarch64).
extern const Kernel kArmv8CeKernel;

// The same, with EOR3 (FEAT_SHA3) in its bulk loops; only for CPUs that also have
// SHA3 (the instruction faults elsewhere).
extern const Kernel kArmv8CeEor3Kernel;

}  // namespace sealbox::crypto::kernel

#endif  // SEALBOX_CRYPTO_ARMV8_CE_ARMV8_CE_H_
