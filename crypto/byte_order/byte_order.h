// Big-endian loads and stores: the byte order of GCM's counter and lengths blocks,
// GHASH's field elements, AES's words and sealbox's wire formats. Any alignment is
// fine; each is one unaligned load or store plus a byte swap.
//
// A leaf: kernels, the mode layer, the formats and the server all use it.
#ifndef SEALBOX_CRYPTO_BYTE_ORDER_BYTE_ORDER_H_
#define SEALBOX_CRYPTO_BYTE_ORDER_BYTE_ORDER_H_

#include <cstdint>
#include <cstring>

namespace sealbox::crypto {

inline uint32_t LoadBigEndian32(const uint8_t* in) {
  uint32_t value;
  std::memcpy(&value, in, sizeof(value));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  value = __builtin_bswap32(value);
#endif
  return value;
}

inline uint64_t LoadBigEndian64(const uint8_t* in) {
  uint64_t value;
  std::memcpy(&value, in, sizeof(value));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  value = __builtin_bswap64(value);
#endif
  return value;
}

inline void StoreBigEndian32(uint32_t value, uint8_t* out) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  value = __builtin_bswap32(value);
#endif
  std::memcpy(out, &value, sizeof(value));
}

inline void StoreBigEndian64(uint64_t value, uint8_t* out) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  value = __builtin_bswap64(value);
#endif
  std::memcpy(out, &value, sizeof(value));
}

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_BYTE_ORDER_BYTE_ORDER_H_
