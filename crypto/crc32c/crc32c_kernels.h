// The CRC32C implementations behind crc32c.h. Each extends a finished CRC (the
// value Crc32c returns) by `size` bytes. Only crc32c.cc calls them, after checking
// that the CPU has what the implementation needs.
#ifndef SEALBOX_CRYPTO_CRC32C_CRC32C_KERNELS_H_
#define SEALBOX_CRYPTO_CRC32C_CRC32C_KERNELS_H_

#include <cstddef>
#include <cstdint>

namespace sealbox::crypto::crc32c_internal {

// Slicing-by-8 over tables built at compile time: any CPU.
uint32_t ExtendPortable(uint32_t crc, const uint8_t* data, size_t size);

// SSE4.2 `crc32` (x86-64 builds only): three streams joined by table lookups.
uint32_t ExtendX86Sse42(uint32_t crc, const uint8_t* data, size_t size);

// SSE4.2 `crc32` and PCLMULQDQ (x86-64 builds only): six streams joined by
// carry-less multiplication.
uint32_t ExtendX86Pclmul(uint32_t crc, const uint8_t* data, size_t size);

// ARMv8 CRC32 instructions, `crc32c[bhwx]` (AArch64 builds only).
uint32_t ExtendArmv8Crc32(uint32_t crc, const uint8_t* data, size_t size);

}  // namespace sealbox::crypto::crc32c_internal

#endif  // SEALBOX_CRYPTO_CRC32C_CRC32C_KERNELS_H_
