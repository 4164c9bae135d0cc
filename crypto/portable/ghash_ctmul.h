// Constant-time GHASH (SP 800-38D section 6.4): carry-less multiplication built from
// ordinary integer multiplies "with holes", so no table is indexed by secrets.
#ifndef SEALBOX_CRYPTO_PORTABLE_GHASH_CTMUL_H_
#define SEALBOX_CRYPTO_PORTABLE_GHASH_CTMUL_H_

#include <cstddef>
#include <cstdint>

namespace sealbox::crypto::kernel::portable {

// A GF(2^128) element in GCM's bit-reflected convention: `hi` is bytes 0..7 read
// big-endian, so the coefficient of x^0 is the top bit of `hi` and that of x^127
// the bottom bit of `lo`.
struct GhashElement {
  uint64_t hi;
  uint64_t lo;
};

// Blocks folded per reduction. Aggregation also makes the multiplications of a
// group independent of each other, which the CPU can overlap.
inline constexpr size_t kGhashAggregate = 8;

// H^1..H^8, ready for the multiplier. powers[k] is H^(k+1) * x^-1 (the factor
// x^-1 cancels the one-bit offset of a reflected product), as the three Karatsuba
// operands (hi, lo, hi ^ lo), each cut into five: its bits 0..59 in the four hole
// classes (masks 0x1111..., 0x2222..., 0x4444..., 0x8888...) and its bits 60..63.
struct GhashKey {
  uint64_t powers[kGhashAggregate][3][5];
};

GhashElement LoadGhashElement(const uint8_t in[16]);
void StoreGhashElement(const GhashElement& x, uint8_t out[16]);

// Precomputes the powers of `h` (= AES_K(0^128)).
void InitGhashKey(const uint8_t h[16], GhashKey* key);

// For each of `blocks` 16-byte blocks of `in`: x = (x ^ block) * H.
void GhashBlocks(const GhashKey& key, GhashElement* x, const uint8_t* in, size_t blocks);

}  // namespace sealbox::crypto::kernel::portable

#endif  // SEALBOX_CRYPTO_PORTABLE_GHASH_CTMUL_H_
