// GHASH by integer multiplication with holes.
//
// A carry-less product is an integer product whose carries are thrown away. Keep
// only every fourth bit of each operand (masks 0x1111..., 0x2222..., ...) and an
// integer multiply lands all partial products on every fourth bit, with three
// empty bits ("holes") above each to catch the carries. The number of partial
// products meeting in one bit is at most the number of set bits in the sparser
// operand; H's pieces keep at most 15, which a 4-bit hole holds, so no carry
// reaches the next kept bit. XOR the class products, mask away the holes, and the
// carry-less product remains. Only multiplies, ANDs, XORs and shifts: constant
// time wherever integer multiplication is (it is on x86-64 and Arm64).
//
// Per block: 3 Karatsuba products of 64x64 bits, each 20 64x64->128 multiplies.
// Blocks go in groups of up to 8 (x ^ b_0) * H^8 ^ ... ^ b_7 * H with one
// reduction per group.
#include "crypto/portable/ghash_ctmul.h"

#include "crypto/byte_order/byte_order.h"
#include "crypto/secret/secure_wipe.h"

namespace sealbox::crypto::kernel::portable {
namespace {

using U128 = unsigned __int128;

constexpr uint64_t kHole[4] = {0x1111111111111111, 0x2222222222222222, 0x4444444444444444,
                               0x8888888888888888};
constexpr uint64_t kLow60 = 0x0fffffffffffffff;

// The Karatsuba operands of a 128-bit value.
enum Part { kHi = 0, kLo = 1, kMid = 2 };

constexpr U128 Wide(uint64_t hi, uint64_t lo) { return (U128{hi} << 64) | lo; }

// Cuts a 64-bit Karatsuba operand of H for the multiplier: bits 0..59 into the
// four hole classes (15 bits each), and bits 60..63 on their own.
void SplitForMultiply(uint64_t y, uint64_t out[5]) {
  for (int k = 0; k < 4; ++k) out[k] = y & kLow60 & kHole[k];
  out[4] = y & ~kLow60;
}

// z[k] ^= the class-k integer products x_i * y_j (i + j = k mod 4) of x and H's
// low 60 bits: each kept bit is the parity of at most 15 terms, so their carries
// stay in the 4-bit holes. z[4] ^= x_i * (H's top four bits): one term per bit at
// most, no carries, exact as it stands. Products are XORed, never added, so the
// carries of different products never meet.
inline void MulAccumulate(uint64_t x, const uint64_t y[5], U128 z[5]) {
  const U128 x0 = x & kHole[0];
  const U128 x1 = x & kHole[1];
  const U128 x2 = x & kHole[2];
  const U128 x3 = x & kHole[3];
  z[0] ^= (x0 * y[0]) ^ (x1 * y[3]) ^ (x2 * y[2]) ^ (x3 * y[1]);
  z[1] ^= (x0 * y[1]) ^ (x1 * y[0]) ^ (x2 * y[3]) ^ (x3 * y[2]);
  z[2] ^= (x0 * y[2]) ^ (x1 * y[1]) ^ (x2 * y[0]) ^ (x3 * y[3]);
  z[3] ^= (x0 * y[3]) ^ (x1 * y[2]) ^ (x2 * y[1]) ^ (x3 * y[0]);
  z[4] ^= (x0 * y[4]) ^ (x1 * y[4]) ^ (x2 * y[4]) ^ (x3 * y[4]);
}

// Keeps each class's own bits and adds the exact part: the 128-bit carry-less
// product.
inline U128 MaskHoles(const U128 z[5]) {
  return (z[0] & Wide(kHole[0], kHole[0])) ^ (z[1] & Wide(kHole[1], kHole[1])) ^
         (z[2] & Wide(kHole[2], kHole[2])) ^ (z[3] & Wide(kHole[3], kHole[3])) ^ z[4];
}

// Reduces a 256-bit reflected product modulo x^128 + x^7 + x^2 + x + 1.
//
// Reflected, u3 holds the coefficients of x^0..x^63 and u0 those of x^192..x^255;
// multiplying by x is a right shift. The high half (u1:u0) is x^128 * Hh, and
// x^128 = 1 + x + x^2 + x^7, so Hh is folded in shifted by 0, 1, 2 and 7.
GhashElement Reduce(uint64_t u3, uint64_t u2, uint64_t u1, uint64_t u0) {
  // First phase: the bits of u0 that those shifts push past x^127 wrap around
  // (again times 1 + x + x^2 + x^7); as they reach at most x^134 their wrapped
  // image lies within u1's reach, so add them there first.
  const uint64_t d = u1 ^ (u0 << 63) ^ (u0 << 62) ^ (u0 << 57);
  // Second phase: fold (d:u0) * (1 + x + x^2 + x^7) into the low half.
  const uint64_t hi = d ^ (d >> 1) ^ (d >> 2) ^ (d >> 7);
  const uint64_t lo = u0 ^ (u0 >> 1) ^ (u0 >> 2) ^ (u0 >> 7) ^ (d << 63) ^ (d << 62) ^ (d << 57);
  return {u3 ^ hi, u2 ^ lo};
}

// x * x^-1 mod P. Reflected, dividing by x is a left shift; when the x^0 bit was
// set, P is added first (x^-1 = x^127 + x^6 + x + 1: the constant 0xc2...01).
GhashElement DivideByX(const GhashElement& x) {
  const uint64_t carry = 0 - (x.hi >> 63);  // all ones iff x^0 was set
  return {((x.hi << 1) | (x.lo >> 63)) ^ (carry & 0xc200000000000000), (x.lo << 1) ^ (carry & 1)};
}

void SetPower(const GhashElement& power, uint64_t out[3][5]) {
  const GhashElement y = DivideByX(power);
  SplitForMultiply(y.hi, out[kHi]);
  SplitForMultiply(y.lo, out[kLo]);
  SplitForMultiply(y.hi ^ y.lo, out[kMid]);
}

// Up to kGhashAggregate products block * H^k summed before one reduction, kept
// raw (carries still in the holes, Karatsuba parts apart) until the end: all of
// that is linear, so the group pays for one masking and one reduction.
struct GhashGroup {
  U128 sums[3][5] = {};
};

// group += block * H^power, for power in 1..kGhashAggregate.
inline void GhashGroupAdd(const GhashKey& key, const GhashElement& block, size_t power,
                          GhashGroup* group) {
  const uint64_t(&y)[3][5] = key.powers[power - 1];
  MulAccumulate(block.hi, y[kHi], group->sums[kHi]);
  MulAccumulate(block.lo, y[kLo], group->sums[kLo]);
  MulAccumulate(block.hi ^ block.lo, y[kMid], group->sums[kMid]);
}

// The group's sum, reduced.
GhashElement GhashGroupFinish(const GhashGroup& group) {
  // Karatsuba: the 256-bit product is hi * 2^128 ^ mid * 2^64 ^ lo. It is x times
  // the true product (a reflected product sits one bit low), which the x^-1 in
  // the powers of H cancels.
  const U128 hi = MaskHoles(group.sums[kHi]);
  const U128 lo = MaskHoles(group.sums[kLo]);
  const U128 mid = MaskHoles(group.sums[kMid]) ^ hi ^ lo;
  const uint64_t u3 = static_cast<uint64_t>(hi >> 64);
  const uint64_t u2 = static_cast<uint64_t>(hi) ^ static_cast<uint64_t>(mid >> 64);
  const uint64_t u1 = static_cast<uint64_t>(lo >> 64) ^ static_cast<uint64_t>(mid);
  const uint64_t u0 = static_cast<uint64_t>(lo);
  return Reduce(u3, u2, u1, u0);
}

}  // namespace

GhashElement LoadGhashElement(const uint8_t in[16]) {
  return {LoadBigEndian64(in), LoadBigEndian64(in + 8)};
}

void StoreGhashElement(const GhashElement& x, uint8_t out[16]) {
  StoreBigEndian64(x.hi, out);
  StoreBigEndian64(x.lo, out + 8);
}

void InitGhashKey(const uint8_t h[16], GhashKey* key) {
  GhashElement power = LoadGhashElement(h);
  SetPower(power, key->powers[0]);
  for (size_t k = 1; k < kGhashAggregate; ++k) {
    GhashGroup group;
    GhashGroupAdd(*key, power, 1, &group);  // H^(k+1) = H^k * H
    power = GhashGroupFinish(group);
    SetPower(power, key->powers[k]);
  }
  SecureWipe(&power, sizeof(power));
}

void GhashBlocks(const GhashKey& key, GhashElement* x, const uint8_t* in, size_t blocks) {
  while (blocks > 0) {
    // (x ^ b_0) * H^m ^ b_1 * H^(m-1) ^ ... ^ b_(m-1) * H, reduced once.
    const size_t m = blocks < kGhashAggregate ? blocks : kGhashAggregate;
    GhashGroup group;
    for (size_t b = 0; b < m; ++b) {
      GhashElement block = LoadGhashElement(in + 16 * b);
      if (b == 0) {  // the accumulator joins the group's first block
        block.hi ^= x->hi;
        block.lo ^= x->lo;
      }
      GhashGroupAdd(key, block, m - b, &group);
    }
    *x = GhashGroupFinish(group);
    in += 16 * m;
    blocks -= m;
  }
}

}  // namespace sealbox::crypto::kernel::portable
