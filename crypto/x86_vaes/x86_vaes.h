#ifndef SEALBOX_CRYPTO_X86_VAES_X86_VAES_H_
#define SEALBOX_CRYPTO_X86_VAES_X86_VAES_H_

#include "crypto/kernel/kernel.h"

namespace sealbox::crypto::kernel {

// AES-GCM with VAES and VPCLMULQDQ on 512-bit vectors (four blocks per
// instruction), 32 blocks per loop iteration. Needs AES-NI, PCLMULQDQ, AVX2,
// VAES, VPCLMULQDQ and AVX-512 F/BW/VL with the OS saving ZMM state (Ice Lake and
// later Intel server parts, AMD Zen 4 and 5). Defined only in x86-64 builds.
extern const Kernel kX86VaesAvx512Kernel;

// The same instructions on 256-bit vectors, 16 blocks per iteration, for CPUs
// with VAES but without usable AVX-512 (AMD Zen 3, Intel Alder Lake and later
// client parts). Needs AES-NI, PCLMULQDQ, AVX2, VAES and VPCLMULQDQ.
extern const Kernel kX86VaesAvx2Kernel;

}  // namespace sealbox::crypto::kernel

#endif  // SEALBOX_CRYPTO_X86_VAES_X86_VAES_H_
