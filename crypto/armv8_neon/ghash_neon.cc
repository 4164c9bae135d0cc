// GHASH from 8-bit polynomial multiplies.
//
// Representation. rbit reverses the bits of each byte, which turns GCM's
// bit-reflected block into a plain polynomial: after it, bit i of the 16 bytes read
// little-endian is the coefficient of x^i, and the field is GF(2)[x] modulo
// x^128 + x^7 + x^2 + x + 1. The accumulator stays in that form inside a call.
//
// 64 x 64-bit products. pmull .8b multiplies eight byte pairs at once, lane k
// holding a[k] * b[k] (15 bits) at bit 16k. With b rotated by r bytes (b'[k] =
// b[k + r mod 8]) lane k holds a[k] * b[k + r], whose true place is bit 16k + 8r,
// or 16k + 8r - 64 in the r "wrapped" top lanes where k + r >= 8. The same holds
// for a rotated and b not. So the 64 byte pairs fall into five classes that need
// the same fix-up: r = 0 (one multiply), r = 1, 2, 3 (a rotated, and b rotated:
// two multiplies each, together all pairs i - j = +-r and +-(8 - r)), and r = 4
// (one multiply covers +-4). Eight multiplies per 64 x 64 product.
//
// Aggregation. The fix-up of a class is linear, so each class is summed over all
// the blocks of a group (multiplied by H^8..H^1) and fixed up once per group:
// wrapped lanes move down 64 bits, then the class shifts up r bytes.
//
// Karatsuba. A 128 x 128 product is lo = a0*h0, hi = a1*h1 and
// mid = (a0 ^ a1)*(h0 ^ h1), so 24 multiplies per block: lo and hi share
// instructions (pmull takes the low halves of its operands, pmull2 the high ones)
// and the rotations of H are precomputed (GhashPower), leaving three tbl and four
// ext per block for the rotations of the data.
//
// Reduction once per group: x^128 = x^7 + x^2 + x + 1 = 0x87, and the high half
// times 0x87 is two more byte multiplies (even and odd bytes).
//
// Nothing here indexes memory or branches by a secret: H, the data and the
// accumulator only ever meet NEON arithmetic, tbl with constant indices and ext.
#include "crypto/armv8_neon/ghash_neon.h"

#include <arm_neon.h>

#include <cstring>

#include "crypto/secret/secure_wipe.h"

namespace sealbox::crypto::kernel::armv8_neon {

// ghash_neon_core.S is written for this layout.
static_assert(kGhashGroup == 8 && sizeof(GhashPower) == 128 && sizeof(GhashKey) == 8 * 128);

namespace {

// Rotates each 8-byte half down by one byte.
alignas(16) constexpr uint8_t kRotateHalves[16] = {1, 2,  3,  4,  5,  6,  7,  0,
                                                   9, 10, 11, 12, 13, 14, 15, 8};
// Even-indexed bytes, then odd-indexed bytes.
alignas(16) constexpr uint8_t kEvenOdd[16] = {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15};
// Class r's wrapped lanes: the top r 16-bit lanes (bytes 16 - 2r .. 15).
alignas(16) constexpr uint8_t kWrapped[4][16] = {
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
    {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
};

inline uint8x16_t Pmull(uint8x16_t a, uint8x16_t b) {
  return vreinterpretq_u8_p16(
      vmull_p8(vreinterpret_p8_u8(vget_low_u8(a)), vreinterpret_p8_u8(vget_low_u8(b))));
}

inline uint8x16_t Pmull2(uint8x16_t a, uint8x16_t b) {
  return vreinterpretq_u8_p16(vmull_high_p8(vreinterpretq_p8_u8(a), vreinterpretq_p8_u8(b)));
}

// Class sums of one 64 x 64 product kind (lo, hi or mid), before fix-up.
struct ClassSums {
  uint8x16_t c[5];
};

// Sum of the class r partial products, placed: wrapped lanes move down 64 bits
// (swap them into the other half), then all move up r bytes (the top r bytes are
// empty by then, so the rotation is a shift).
template <int r>
inline uint8x16_t Place(uint8x16_t sum) {
  const uint8x16_t wrapped = vandq_u8(sum, vld1q_u8(kWrapped[r - 1]));
  uint8x16_t y = veorq_u8(sum, wrapped);
  y = veorq_u8(y, vextq_u8(wrapped, wrapped, 8));
  return vextq_u8(y, y, 16 - r);
}

inline uint8x16_t Product64(const ClassSums& s) {
  uint8x16_t p = veorq_u8(s.c[0], Place<1>(s.c[1]));
  p = veorq_u8(p, Place<2>(s.c[2]));
  p = veorq_u8(p, Place<3>(s.c[3]));
  return veorq_u8(p, Place<4>(s.c[4]));
}

// (lo, hi, mid) of a group to the reduced 128-bit sum.
inline uint8x16_t Finish(const ClassSums& lo_sums, const ClassSums& hi_sums,
                         const ClassSums& mid_sums) {
  const uint8x16_t zero = vdupq_n_u8(0);
  const uint8x16_t lo = Product64(lo_sums);
  const uint8x16_t hi = Product64(hi_sums);
  const uint8x16_t mid = veorq_u8(veorq_u8(Product64(mid_sums), lo), hi);
  // The 256-bit product is lo + mid x^64 + hi x^128.
  const uint8x16_t low = veorq_u8(lo, vextq_u8(zero, mid, 8));
  const uint8x16_t high = veorq_u8(hi, vextq_u8(mid, zero, 8));
  // high * x^128 = high * 0x87: even bytes land on 16-bit lanes, odd bytes one
  // byte up, and the odd part's top byte (x^128..x^134) goes round once more.
  const uint8x16_t g = vdupq_n_u8(0x87);
  const uint8x16_t split = vqtbl1q_u8(high, vld1q_u8(kEvenOdd));
  const uint8x16_t even = Pmull(split, g);
  const uint8x16_t odd = Pmull2(split, g);
  uint8x16_t r = veorq_u8(low, even);
  r = veorq_u8(r, vextq_u8(zero, odd, 15));
  return veorq_u8(r, Pmull(vextq_u8(odd, zero, 15), g));
}

// x = (x ^ block) * H, with x in the rbit form. The group loop
// (ghash_neon_core.S) does the same for eight blocks against H^8..H^1; this
// one-block version serves the last blocks of a call and the key setup.
uint8x16_t MultiplyOne(const GhashPower& power, uint8x16_t x, const uint8_t block[16]) {
  const uint8x16_t rotate = vld1q_u8(kRotateHalves);
  const uint8x16_t a = veorq_u8(vrbitq_u8(vld1q_u8(block)), x);
  const uint8x16x4_t h = vld1q_u8_x4(power.t[0]);   // t[0..3]
  const uint8x16x4_t hh = vld1q_u8_x4(power.t[4]);  // t[4..7]
  const uint8x16_t a1 = vqtbl1q_u8(a, rotate);
  const uint8x16_t a2 = vqtbl1q_u8(a1, rotate);
  const uint8x16_t a3 = vqtbl1q_u8(a2, rotate);
  const uint8x16_t m = veorq_u8(a, vextq_u8(a, a, 8));  // a0 ^ a1 in both halves
  const uint8x16_t m1 = vextq_u8(m, m, 1);
  const uint8x16_t m2 = vextq_u8(m, m, 2);
  const uint8x16_t m3 = vextq_u8(m, m, 3);
  ClassSums lo, hi, mid;
  // lo (pmull, low halves) and hi (pmull2, high halves): classes 0 and 4 from
  // a * t[0], a * t[4]; classes 1..3 from a * rot_r(h) and rot_r(a) * h.
  lo.c[0] = Pmull(a, h.val[0]);
  hi.c[0] = Pmull2(a, h.val[0]);
  lo.c[1] = veorq_u8(Pmull(a, h.val[1]), Pmull(a1, h.val[0]));
  hi.c[1] = veorq_u8(Pmull2(a, h.val[1]), Pmull2(a1, h.val[0]));
  lo.c[2] = veorq_u8(Pmull(a, h.val[2]), Pmull(a2, h.val[0]));
  hi.c[2] = veorq_u8(Pmull2(a, h.val[2]), Pmull2(a2, h.val[0]));
  lo.c[3] = veorq_u8(Pmull(a, h.val[3]), Pmull(a3, h.val[0]));
  hi.c[3] = veorq_u8(Pmull2(a, h.val[3]), Pmull2(a3, h.val[0]));
  lo.c[4] = Pmull(a, hh.val[0]);
  hi.c[4] = Pmull2(a, hh.val[0]);
  // mid: m against hm and its rotations (t[5..7]), and m rotated against hm.
  mid.c[0] = Pmull(m, hh.val[1]);
  mid.c[4] = Pmull2(m, hh.val[1]);
  mid.c[1] = veorq_u8(Pmull(m, hh.val[2]), Pmull2(m1, hh.val[3]));
  mid.c[2] = veorq_u8(Pmull2(m, hh.val[2]), Pmull(m2, hh.val[1]));
  mid.c[3] = veorq_u8(Pmull(m, hh.val[3]), Pmull(m3, hh.val[1]));
  return Finish(lo, hi, mid);
}

// Rotates an 8-byte value down by r bytes.
void Rotate8(const uint8_t in[8], int r, uint8_t out[8]) {
  for (int k = 0; k < 8; ++k) out[k] = in[(k + r) % 8];
}

void MakePower(const uint8_t h_gcm[16], GhashPower* power) {
  uint8_t h[16], hm[8];
  vst1q_u8(h, vrbitq_u8(vld1q_u8(h_gcm)));
  for (int k = 0; k < 8; ++k) hm[k] = h[k] ^ h[8 + k];
  for (int r = 0; r <= 4; ++r) {
    Rotate8(h, r, power->t[r]);
    Rotate8(h + 8, r, power->t[r] + 8);
  }
  const int mid_rotations[3][2] = {{0, 4}, {1, 2}, {3, 0}};
  for (int i = 0; i < 3; ++i) {
    Rotate8(hm, mid_rotations[i][0], power->t[5 + i]);
    Rotate8(hm, mid_rotations[i][1], power->t[5 + i] + 8);
  }
  SecureWipe(h, sizeof(h));
  SecureWipe(hm, sizeof(hm));
}

}  // namespace

void InitGhashKey(const uint8_t h[16], GhashKey* key) {
  std::memset(key, 0, sizeof(*key));
  GhashPower* const h1 = &key->powers[kGhashGroup - 1];
  MakePower(h, h1);
  // H^(k+1) = (0 ^ H^k) * H, through the one-block multiply.
  uint8_t power[16];
  std::memcpy(power, h, 16);
  for (int k = 2; k <= kGhashGroup; ++k) {
    const uint8x16_t x = MultiplyOne(*h1, vdupq_n_u8(0), power);
    vst1q_u8(power, vrbitq_u8(x));
    MakePower(power, &key->powers[kGhashGroup - k]);
  }
  SecureWipe(power, sizeof(power));
}

void GhashBlocks(const GhashKey& key, uint8_t x[16], const uint8_t* in, size_t blocks) {
  const size_t groups = blocks / kGhashGroup;
  if (groups > 0) armv8_neon_ghash_blocks(&key, x, in, groups);
  in += 16 * kGhashGroup * groups;
  blocks %= kGhashGroup;
  if (blocks == 0) return;
  uint8x16_t acc = vrbitq_u8(vld1q_u8(x));
  for (; blocks > 0; --blocks, in += 16) {
    acc = MultiplyOne(key.powers[kGhashGroup - 1], acc, in);
  }
  vst1q_u8(x, vrbitq_u8(acc));
}

}  // namespace sealbox::crypto::kernel::armv8_neon
