// Bitsliced AES. Every step is a fixed sequence of boolean operations, shifts and
// shuffles on whole words: no branch and no memory index depends on key or data.
#include "crypto/portable/aes_bitsliced.h"

#include <cstring>

#include "crypto/secret/secure_wipe.h"

namespace sealbox::crypto::kernel::portable {
namespace {

using U64x2 = uint64_t __attribute__((vector_size(16)));
using U16x8 = uint16_t __attribute__((vector_size(16)));
using U8x16 = uint8_t __attribute__((vector_size(16)));
// Shuffles use __builtin_shufflevector (constant indices), which GCC 12 and clang
// both know; GCC's __builtin_shuffle is unknown to clang (the fuzz build).

// ---------------------------------------------------------------------------
// Conversion between eight plain blocks and eight bit planes.
// ---------------------------------------------------------------------------

// Interleaves the low and high halves bytewise (one punpcklbw). As a map on the
// 4-bit byte index it rotates right by one; done twice it swaps the two 2-bit
// halves of the index, i.e. transposes the 4x4 byte matrix.
inline BitPlane InterleaveHalves(BitPlane x) {
  const U8x16 v = reinterpret_cast<U8x16>(x);
  const U64x2 x64 = reinterpret_cast<U64x2>(x);
  const U8x16 high = reinterpret_cast<U8x16>(__builtin_shufflevector(x64, x64, 1, 1));
  return reinterpret_cast<BitPlane>(
      __builtin_shufflevector(v, high, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
}

// AES stores a block column by column (byte 4*c + r); the planes want rows.
inline BitPlane TransposeBytes(BitPlane x) { return InterleaveHalves(InterleaveHalves(x)); }

// Exchanges bit `shift` of the word index with bit `shift` of the in-byte bit
// position, for the word pair (a, b) whose indices differ in that bit.
inline void SwapMove(BitPlane& a, BitPlane& b, int shift, uint64_t mask) {
  const U64x2 x = reinterpret_cast<U64x2>(a);
  const U64x2 y = reinterpret_cast<U64x2>(b);
  const U64x2 t = ((x >> shift) ^ y) & mask;
  b = reinterpret_cast<BitPlane>(y ^ t);
  a = reinterpret_cast<BitPlane>(x ^ (t << shift));
}

// Transposes the 8x8 bit matrix at every byte position across the eight words:
// afterwards word b, bit w holds what was word w, bit b. An involution.
inline void TransposeBits(BitPlane q[8]) {
  for (int i = 0; i < 8; i += 2) SwapMove(q[i], q[i + 1], 1, 0x5555555555555555);
  for (int i = 0; i < 8; i += 4) {
    SwapMove(q[i], q[i + 2], 2, 0x3333333333333333);
    SwapMove(q[i + 1], q[i + 3], 2, 0x3333333333333333);
  }
  for (int i = 0; i < 4; ++i) SwapMove(q[i], q[i + 4], 4, 0x0f0f0f0f0f0f0f0f);
}

// q[w] holds block w on entry and bit plane w on return.
inline void Bitslice(BitPlane q[8]) {
  for (int i = 0; i < 8; ++i) q[i] = TransposeBytes(q[i]);
  TransposeBits(q);
}

// The inverse of Bitslice (both steps are involutions).
inline void Unbitslice(BitPlane q[8]) {
  TransposeBits(q);
  for (int i = 0; i < 8; ++i) q[i] = TransposeBytes(q[i]);
}

// ---------------------------------------------------------------------------
// The round function.
// ---------------------------------------------------------------------------

// SubBytes without its affine constant: returns S(x) ^ 0x63 in every byte. The
// constant commutes with ShiftRows and MixColumns (whose coefficients sum to 1),
// so it is added back through the round keys, saving four NOTs per round.
//
// The circuit is the depth-16, 128-gate S-box of Boyar and Peralta ("A depth-16
// circuit for the AES S-box", 2012): a linear layer into GF((2^4)^2), an inversion
// sharing its products, and a linear layer back. U0 is the most significant bit.
//
// Forced inline: as a call it costs the round loop about 15% (measured).
[[gnu::always_inline]] inline void SubBytesNoAffineConstant(BitPlane q[8]) {
  const BitPlane u0 = q[7], u1 = q[6], u2 = q[5], u3 = q[4];
  const BitPlane u4 = q[3], u5 = q[2], u6 = q[1], u7 = q[0];

  // Top linear layer.
  const BitPlane t1 = u0 ^ u3;
  const BitPlane t2 = u0 ^ u5;
  const BitPlane t3 = u0 ^ u6;
  const BitPlane t4 = u3 ^ u5;
  const BitPlane t5 = u4 ^ u6;
  const BitPlane t6 = t1 ^ t5;
  const BitPlane t7 = u1 ^ u2;
  const BitPlane t8 = u7 ^ t6;
  const BitPlane t9 = u7 ^ t7;
  const BitPlane t10 = t6 ^ t7;
  const BitPlane t11 = u1 ^ u5;
  const BitPlane t12 = u2 ^ u5;
  const BitPlane t13 = t3 ^ t4;
  const BitPlane t14 = t6 ^ t11;
  const BitPlane t15 = t5 ^ t11;
  const BitPlane t16 = t5 ^ t12;
  const BitPlane t17 = t9 ^ t16;
  const BitPlane t18 = u3 ^ u7;
  const BitPlane t19 = t7 ^ t18;
  const BitPlane t20 = t1 ^ t19;
  const BitPlane t21 = u6 ^ u7;
  const BitPlane t22 = t7 ^ t21;
  const BitPlane t23 = t2 ^ t22;
  const BitPlane t24 = t2 ^ t10;
  const BitPlane t25 = t20 ^ t17;
  const BitPlane t26 = t3 ^ t16;
  const BitPlane t27 = t1 ^ t12;

  // Middle non-linear layer: the inversion.
  const BitPlane m1 = t13 & t6;
  const BitPlane m2 = t23 & t8;
  const BitPlane m3 = t14 ^ m1;
  const BitPlane m4 = t19 & u7;
  const BitPlane m5 = m4 ^ m1;
  const BitPlane m6 = t3 & t16;
  const BitPlane m7 = t22 & t9;
  const BitPlane m8 = t26 ^ m6;
  const BitPlane m9 = t20 & t17;
  const BitPlane m10 = m9 ^ m6;
  const BitPlane m11 = t1 & t15;
  const BitPlane m12 = t4 & t27;
  const BitPlane m13 = m12 ^ m11;
  const BitPlane m14 = t2 & t10;
  const BitPlane m15 = m14 ^ m11;
  const BitPlane m16 = m3 ^ m2;
  const BitPlane m17 = m5 ^ t24;
  const BitPlane m18 = m8 ^ m7;
  const BitPlane m19 = m10 ^ m15;
  const BitPlane m20 = m16 ^ m13;
  const BitPlane m21 = m17 ^ m15;
  const BitPlane m22 = m18 ^ m13;
  const BitPlane m23 = m19 ^ t25;
  const BitPlane m24 = m22 ^ m23;
  const BitPlane m25 = m22 & m20;
  const BitPlane m26 = m21 ^ m25;
  const BitPlane m27 = m20 ^ m21;
  const BitPlane m28 = m23 ^ m25;
  const BitPlane m29 = m28 & m27;
  const BitPlane m30 = m26 & m24;
  const BitPlane m31 = m20 & m23;
  const BitPlane m32 = m27 & m31;
  const BitPlane m33 = m27 ^ m25;
  const BitPlane m34 = m21 & m22;
  const BitPlane m35 = m24 & m34;
  const BitPlane m36 = m24 ^ m25;
  const BitPlane m37 = m21 ^ m29;
  const BitPlane m38 = m32 ^ m33;
  const BitPlane m39 = m23 ^ m30;
  const BitPlane m40 = m35 ^ m36;
  const BitPlane m41 = m38 ^ m40;
  const BitPlane m42 = m37 ^ m39;
  const BitPlane m43 = m37 ^ m38;
  const BitPlane m44 = m39 ^ m40;
  const BitPlane m45 = m42 ^ m41;
  const BitPlane m46 = m44 & t6;
  const BitPlane m47 = m40 & t8;
  const BitPlane m48 = m39 & u7;
  const BitPlane m49 = m43 & t16;
  const BitPlane m50 = m38 & t9;
  const BitPlane m51 = m37 & t17;
  const BitPlane m52 = m42 & t15;
  const BitPlane m53 = m45 & t27;
  const BitPlane m54 = m41 & t10;
  const BitPlane m55 = m44 & t13;
  const BitPlane m56 = m40 & t23;
  const BitPlane m57 = m39 & t19;
  const BitPlane m58 = m43 & t3;
  const BitPlane m59 = m38 & t22;
  const BitPlane m60 = m37 & t20;
  const BitPlane m61 = m42 & t1;
  const BitPlane m62 = m45 & t4;
  const BitPlane m63 = m41 & t2;

  // Bottom linear layer (the circuit's four XNORs become XORs here).
  const BitPlane l0 = m61 ^ m62;
  const BitPlane l1 = m50 ^ m56;
  const BitPlane l2 = m46 ^ m48;
  const BitPlane l3 = m47 ^ m55;
  const BitPlane l4 = m54 ^ m58;
  const BitPlane l5 = m49 ^ m61;
  const BitPlane l6 = m62 ^ l5;
  const BitPlane l7 = m46 ^ l3;
  const BitPlane l8 = m51 ^ m59;
  const BitPlane l9 = m52 ^ m53;
  const BitPlane l10 = m53 ^ l4;
  const BitPlane l11 = m60 ^ l2;
  const BitPlane l12 = m48 ^ m51;
  const BitPlane l13 = m50 ^ l0;
  const BitPlane l14 = m52 ^ m61;
  const BitPlane l15 = m55 ^ l1;
  const BitPlane l16 = m56 ^ l0;
  const BitPlane l17 = m57 ^ l1;
  const BitPlane l18 = m58 ^ l8;
  const BitPlane l19 = m63 ^ l4;
  const BitPlane l20 = l0 ^ l1;
  const BitPlane l21 = l1 ^ l7;
  const BitPlane l22 = l3 ^ l12;
  const BitPlane l23 = l18 ^ l2;
  const BitPlane l24 = l15 ^ l9;
  const BitPlane l25 = l6 ^ l10;
  const BitPlane l26 = l7 ^ l9;
  const BitPlane l27 = l8 ^ l10;
  const BitPlane l28 = l11 ^ l14;
  const BitPlane l29 = l11 ^ l17;

  q[7] = l6 ^ l24;
  q[6] = l16 ^ l26;  // XNOR in the circuit
  q[5] = l19 ^ l28;  // XNOR
  q[4] = l6 ^ l21;
  q[3] = l20 ^ l22;
  q[2] = l25 ^ l29;
  q[1] = l13 ^ l27;  // XNOR
  q[0] = l6 ^ l23;   // XNOR
}

// Row r (32-bit lane r) rotates right by r bytes: new (r, c) = old (r, c + r).
inline void ShiftRows(BitPlane q[8]) {
  const BitPlane odd_rows = {0, ~0u, 0, ~0u};
  for (int b = 0; b < 8; ++b) {
    // Rows 2 and 3 rotate by two bytes (one pshufhw) ...
    const U16x8 words = reinterpret_cast<U16x8>(q[b]);
    const BitPlane x =
        reinterpret_cast<BitPlane>(__builtin_shufflevector(words, words, 0, 1, 2, 3, 5, 4, 7, 6));
    // ... then rows 1 and 3 by one byte more.
    const BitPlane rotated = (x >> 8) | (x << 24);
    q[b] = x ^ ((x ^ rotated) & odd_rows);
  }
}

// The next row down (lane r takes lane r + 1) and the one after.
inline BitPlane RowsUp1(BitPlane x) { return __builtin_shufflevector(x, x, 1, 2, 3, 0); }
inline BitPlane RowsUp2(BitPlane x) { return __builtin_shufflevector(x, x, 2, 3, 0, 1); }

// out_r = 2 a_r + 3 a_{r+1} + a_{r+2} + a_{r+3}, computed as
// 2 t_r + a_{r+1} + t_{r+2} with t_r = a_r + a_{r+1}.
inline void MixColumns(BitPlane q[8]) {
  BitPlane up[8], t[8];
  for (int b = 0; b < 8; ++b) {
    up[b] = RowsUp1(q[b]);
    t[b] = q[b] ^ up[b];
  }
  // Doubling in GF(2^8) on planes: shift up one plane, fold bit 7 back with 0x1b.
  const BitPlane doubled[8] = {t[7], t[0] ^ t[7], t[1], t[2] ^ t[7], t[3] ^ t[7], t[4], t[5], t[6]};
  for (int b = 0; b < 8; ++b) q[b] = doubled[b] ^ up[b] ^ RowsUp2(t[b]);
}

inline void AddRoundKey(BitPlane q[8], const BitPlane key[8]) {
  for (int b = 0; b < 8; ++b) q[b] ^= key[b];
}

// Full S-box (with the 0x63) on every byte of a batch; for the key schedule.
void SubBytesBatch(uint8_t blocks[kAesBatchBytes]) {
  BitPlane q[8];
  std::memcpy(q, blocks, sizeof(q));
  Bitslice(q);
  SubBytesNoAffineConstant(q);
  Unbitslice(q);
  std::memcpy(blocks, q, sizeof(q));
  for (size_t i = 0; i < kAesBatchBytes; ++i) blocks[i] ^= 0x63;
  SecureWipe(q, sizeof(q));
}

}  // namespace

void ExpandAesKey(const uint8_t* key, size_t key_bytes, AesRoundKeys* keys) {
  // FIPS-197 section 5.2, over 4-byte words; only the word index (public) steers.
  const size_t nk = key_bytes / 4;
  const int rounds = static_cast<int>(nk) + 6;
  const size_t total_words = 4 * static_cast<size_t>(rounds + 1);
  uint8_t words[4 * 4 * (kAesMaxRounds + 1)];
  uint8_t batch[kAesBatchBytes];
  std::memcpy(words, key, key_bytes);
  uint8_t temp[4];
  uint8_t rcon = 1;
  for (size_t i = nk; i < total_words; ++i) {
    std::memcpy(temp, words + 4 * (i - 1), 4);
    const bool rotate = i % nk == 0;
    if (rotate || (nk > 6 && i % nk == 4)) {
      std::memset(batch, 0, sizeof(batch));
      for (int j = 0; j < 4; ++j) batch[j] = temp[rotate ? (j + 1) % 4 : j];
      SubBytesBatch(batch);
      std::memcpy(temp, batch, 4);
      if (rotate) {
        temp[0] ^= rcon;
        rcon = static_cast<uint8_t>((rcon << 1) ^ ((rcon >> 7) * 0x1b));
      }
    }
    for (int j = 0; j < 4; ++j) words[4 * i + j] = words[4 * (i - nk) + j] ^ temp[j];
  }

  // Bitslice each round key over eight copies, then fold in the S-box constant.
  keys->rounds = rounds;
  for (int r = 0; r <= rounds; ++r) {
    for (size_t w = 0; w < kAesBatchBlocks; ++w) {
      std::memcpy(batch + 16 * w, words + 16 * r, 16);
    }
    BitPlane* planes = keys->planes[r];
    std::memcpy(planes, batch, kAesBatchBytes);
    Bitslice(planes);
    if (r > 0) {
      for (int b = 0; b < 8; ++b) {
        if ((0x63 >> b) & 1) planes[b] = ~planes[b];
      }
    }
  }
  SecureWipe(words, sizeof(words));
  SecureWipe(batch, sizeof(batch));
  SecureWipe(temp, sizeof(temp));
}

void AesEncryptBatch(const AesRoundKeys& keys, uint8_t blocks[kAesBatchBytes]) {
  BitPlane q[8];
  std::memcpy(q, blocks, sizeof(q));
  Bitslice(q);
  AddRoundKey(q, keys.planes[0]);
  for (int r = 1; r <= keys.rounds; ++r) {
    SubBytesNoAffineConstant(q);
    ShiftRows(q);
    if (r != keys.rounds) MixColumns(q);  // the last round has none
    AddRoundKey(q, keys.planes[r]);
  }
  Unbitslice(q);
  std::memcpy(blocks, q, sizeof(q));
}

}  // namespace sealbox::crypto::kernel::portable
