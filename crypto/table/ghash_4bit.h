// GHASH with Shoup's 4-bit tables, for the table kernel only.
// NOT constant time: see table_kernel.cc.
#ifndef SEALBOX_CRYPTO_TABLE_GHASH_4BIT_H_
#define SEALBOX_CRYPTO_TABLE_GHASH_4BIT_H_

#include <cstddef>
#include <cstdint>

namespace sealbox::crypto::kernel::table {

// An element of GF(2^128) in GCM's bit-reflected order: `hi` is bytes 0..7 of the
// block read big-endian, `lo` bytes 8..15. The top bit of `hi` is the coefficient
// of x^0, the bottom bit of `lo` that of x^127.
struct Gf128 {
  uint64_t hi;
  uint64_t lo;
};

// times[n] = n * H, where the nibble n is read as a polynomial of degree < 4 in the
// same reflected order (8 is 1, 4 is x, 2 is x^2, 1 is x^3). 256 bytes per key.
struct GhashTable {
  Gf128 times[16];
};

void BuildGhashTable(const uint8_t h[16], GhashTable* table);

// For each of `blocks` 16-byte blocks of `in`: x = (x ^ block) * H.
void GhashBlocks(const GhashTable& table, uint8_t x[16], const uint8_t* in, size_t blocks);

}  // namespace sealbox::crypto::kernel::table

#endif  // SEALBOX_CRYPTO_TABLE_GHASH_4BIT_H_
