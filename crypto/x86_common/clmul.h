// GHASH arithmetic with PCLMULQDQ, shared by the x86-64 kernels.
//
// GHASH is computed in POLYVAL's representation (RFC 8452, appendix A). Each
// 16-byte block is byte-reversed, so that as a little-endian 128-bit integer its
// bit i is the coefficient of x^i modulo Q = x^128 + x^127 + x^126 + x^121 + 1 (the
// bit-reflection of GCM's polynomial), and H is replaced by H' = ByteReverse(H) * x.
// GHASH's running value after any block is then ByteReverse of POLYVAL's, where
// POLYVAL's product is dot(a, b) = a * b * x^-128 mod Q. That product needs no bit
// shifts: carry-less multiplies give a * b exactly, and a Montgomery reduction by
// x^128 takes two more multiplies by a constant.
//
// Everything here is branch-free and indexes no memory by data: constant time.
#ifndef SEALBOX_CRYPTO_X86_COMMON_CLMUL_H_
#define SEALBOX_CRYPTO_X86_COMMON_CLMUL_H_

#include <immintrin.h>

// Code using AES-NI and PCLMULQDQ is compiled for them function by function, so
// that no instruction the CPU may lack leaks into code run before dispatch has
// checked. Every CPU with AES-NI also has SSSE3 (pshufb).
#define SEALBOX_X86_AESNI __attribute__((target("sse2,ssse3,aes,pclmul")))

namespace sealbox::crypto::x86 {

// pshufb control reversing the 16 bytes of a block.
SEALBOX_X86_AESNI inline __m128i ByteReverseMask() {
  return _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

// x^127 + x^126 + x^121 + 1: Q without its x^128 term. The reduction uses only
// the upper half (x^63 + x^62 + x^57, that is Q's terms above x^64, shifted down).
SEALBOX_X86_AESNI inline __m128i PolyvalConstant() {
  return _mm_set_epi64x(static_cast<long long>(0xC200000000000000ULL), 1);
}

// A sum of unreduced 256-bit products, kept Karatsuba-style: lo = sum a0*b0,
// hi = sum a1*b1, mid = sum (a0^a1)*(b0^b1) (64-bit halves a1:a0, b1:b0).
struct Product {
  __m128i lo = _mm_setzero_si128();
  __m128i mid = _mm_setzero_si128();
  __m128i hi = _mm_setzero_si128();
};

// acc += a * h, where h_karatsuba holds (h0 ^ h1) in its low half.
SEALBOX_X86_AESNI inline void MulAdd(Product& acc, __m128i a, __m128i h, __m128i h_karatsuba) {
  acc.lo = _mm_xor_si128(acc.lo, _mm_clmulepi64_si128(a, h, 0x00));
  acc.hi = _mm_xor_si128(acc.hi, _mm_clmulepi64_si128(a, h, 0x11));
  const __m128i a_folded = _mm_xor_si128(a, _mm_shuffle_epi32(a, 0x4e));
  acc.mid = _mm_xor_si128(acc.mid, _mm_clmulepi64_si128(a_folded, h_karatsuba, 0x00));
}

// (hi * x^128 + lo) * x^-128 mod Q. Each step adds the multiple of Q that clears
// the low 64 bits (Q is 1 modulo x^64, so that multiple is the low half itself) and
// drops them: lo := swap(lo) ^ lo0 * (x^63 + x^62 + x^57).
SEALBOX_X86_AESNI inline __m128i MontgomeryReduce(__m128i lo, __m128i hi) {
  const __m128i poly = PolyvalConstant();
  lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, poly, 0x10));
  lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, poly, 0x10));
  return _mm_xor_si128(lo, hi);
}

// The POLYVAL value of a Product: recover the middle term, then reduce.
SEALBOX_X86_AESNI inline __m128i Reduce(const Product& p) {
  const __m128i mid = _mm_xor_si128(p.mid, _mm_xor_si128(p.lo, p.hi));
  return MontgomeryReduce(_mm_xor_si128(p.lo, _mm_slli_si128(mid, 8)),
                          _mm_xor_si128(p.hi, _mm_srli_si128(mid, 8)));
}

// dot(a, b) = a * b * x^-128 mod Q, schoolbook (for key setup).
SEALBOX_X86_AESNI inline __m128i Dot(__m128i a, __m128i b) {
  const __m128i lo = _mm_clmulepi64_si128(a, b, 0x00);
  const __m128i hi = _mm_clmulepi64_si128(a, b, 0x11);
  const __m128i mid =
      _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01), _mm_clmulepi64_si128(a, b, 0x10));
  return MontgomeryReduce(_mm_xor_si128(lo, _mm_slli_si128(mid, 8)),
                          _mm_xor_si128(hi, _mm_srli_si128(mid, 8)));
}

// a * x mod Q (RFC 8452's mulX_POLYVAL), without a branch on a's top bit.
SEALBOX_X86_AESNI inline __m128i MulX(__m128i a) {
  const __m128i carries = _mm_srli_epi64(a, 63);  // each half's top bit, at bit 0
  __m128i shifted = _mm_or_si128(_mm_slli_epi64(a, 1), _mm_slli_si128(carries, 8));
  // All ones when bit 127 of a was set, else zero.
  const __m128i top = _mm_shuffle_epi32(_mm_srli_si128(carries, 8), 0x00);
  const __m128i mask = _mm_sub_epi32(_mm_setzero_si128(), top);
  return _mm_xor_si128(shifted, _mm_and_si128(mask, PolyvalConstant()));
}

}  // namespace sealbox::crypto::x86

#endif  // SEALBOX_CRYPTO_X86_COMMON_CLMUL_H_
