#include <array>
#include <cstring>

#include "crypto/crc32c/crc32c_kernels.h"

namespace sealbox::crypto::crc32c_internal {
namespace {

constexpr uint32_t kReflectedPolynomial = 0x82f63b78;  // Castagnoli, bit-reversed

// table[0][b] is the CRC of byte b; table[k][b] that of byte b followed by k zero
// bytes, so eight bytes are folded with eight lookups.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc >> 1) ^ ((crc & 1) ? kReflectedPolynomial : 0);
    }
    t[0][b] = crc;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
    }
  }
  return t;
}

constexpr Tables kTables = MakeTables();

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const uint8_t* data, size_t size) {
  uint32_t c = ~crc;
  for (; size >= 8; data += 8, size -= 8) {
    uint32_t low, high;
    std::memcpy(&low, data, 4);  // little-endian hosts: the byte order CRC32C reads
    std::memcpy(&high, data + 4, 4);
    low ^= c;
    c = kTables[7][low & 0xff] ^ kTables[6][(low >> 8) & 0xff] ^ kTables[5][(low >> 16) & 0xff] ^
        kTables[4][low >> 24] ^ kTables[3][high & 0xff] ^ kTables[2][(high >> 8) & 0xff] ^
        kTables[1][(high >> 16) & 0xff] ^ kTables[0][high >> 24];
  }
  for (; size > 0; ++data, --size) c = (c >> 8) ^ kTables[0][(c ^ *data) & 0xff];
  return ~c;
}

}  // namespace sealbox::crypto::crc32c_internal
