#ifndef SEALBOX_CRYPTO_PORTABLE_PORTABLE_H_
#define SEALBOX_CRYPTO_PORTABLE_PORTABLE_H_

#include "crypto/kernel/kernel.h"

namespace sealbox::crypto::kernel {

// Constant-time AES-GCM in plain C++ for any 64-bit CPU: bitsliced AES over 64-bit
// words on several blocks at once, GHASH by integer multiplication with holes.
extern const Kernel kPortableKernel;

}  // namespace sealbox::crypto::kernel

#endif  // SEALBOX_CRYPTO_PORTABLE_PORTABLE_H_
