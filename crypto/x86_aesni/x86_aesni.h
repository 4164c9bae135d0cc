#ifndef SEALBOX_CRYPTO_X86_AESNI_X86_AESNI_H_
#define SEALBOX_CRYPTO_X86_AESNI_X86_AESNI_H_

#include "crypto/kernel/kernel.h"

namespace sealbox::crypto::kernel {

// AES-GCM with AES-NI and PCLMULQDQ on 128-bit registers: eight blocks per loop
// iteration, the AES rounds of one group interleaved with the GHASH of another.
// Needs AES-NI and PCLMULQDQ. Defined only in x86-64 builds.
extern const Kernel kX86AesniKernel;

// The same loops with VEX (AVX) encodings: three-operand forms and unaligned
// memory operands, for CPUs that also have AVX. Needs AES-NI, PCLMULQDQ and AVX
// with the OS saving YMM state.
extern const Kernel kX86AesniAvxKernel;

}  // namespace sealbox::crypto::kernel

#endif  // SEALBOX_CRYPTO_X86_AESNI_X86_AESNI_H_
