// Big-endian loads and stores for the table kernel. Byte by byte, so any alignment
// is fine; compilers turn each into one unaligned load or store plus a byte swap.
#ifndef SEALBOX_CRYPTO_TABLE_BIG_ENDIAN_H_
#define SEALBOX_CRYPTO_TABLE_BIG_ENDIAN_H_

#include <cstdint>

namespace sealbox::crypto::kernel::table {

inline uint32_t LoadBigEndian32(const uint8_t* in) {
  return uint32_t{in[0]} << 24 | uint32_t{in[1]} << 16 | uint32_t{in[2]} << 8 |
         uint32_t{in[3]};
}

inline void StoreBigEndian32(uint32_t value, uint8_t* out) {
  out[0] = static_cast<uint8_t>(value >> 24);
  out[1] = static_cast<uint8_t>(value >> 16);
  out[2] = static_cast<uint8_t>(value >> 8);
  out[3] = static_cast<uint8_t>(value);
}

inline uint64_t LoadBigEndian64(const uint8_t* in) {
  return uint64_t{LoadBigEndian32(in)} << 32 | LoadBigEndian32(in + 4);
}

inline void StoreBigEndian64(uint64_t value, uint8_t* out) {
  StoreBigEndian32(static_cast<uint32_t>(value >> 32), out);
  StoreBigEndian32(static_cast<uint32_t>(value), out + 4);
}

}  // namespace sealbox::crypto::kernel::table

#endif  // SEALBOX_CRYPTO_TABLE_BIG_ENDIAN_H_
