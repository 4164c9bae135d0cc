#ifndef SEALBOX_CRYPTO_X86_AESNI_X86_AESNI_H_
#define SEALBOX_CRYPTO_X86_AESNI_X86_AESNI_H_

#include "crypto/kernel/kernel.h"

namespace sealbox::crypto::kernel {

// AES-GCM with AES-NI and PCLMULQDQ on 128-bit registers: eight blocks per loop
// iteration, the AES rounds of one group interleaved with the GHASH of another.
// Needs AES-NI and PCLMULQDQ. Defined only in x86-64 builds.
extern const Kernel kX86AesniKernel;

}  // namespace sealbox::crypto::kernel

#endif  // SEALBOX_CRYPTO_X86_AESNI_X86_AESNI_H_
