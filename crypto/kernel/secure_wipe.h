#ifndef SEALBOX_CRYPTO_KERNEL_SECURE_WIPE_H_
#define SEALBOX_CRYPTO_KERNEL_SECURE_WIPE_H_

#include <cstddef>

namespace sealbox::crypto {

// Overwrites `size` bytes at `data` with zeros in a way the compiler may not elide,
// for key material and plaintext that must not outlive its use.
void SecureWipe(void* data, size_t size);

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_KERNEL_SECURE_WIPE_H_
