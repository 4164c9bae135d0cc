// The x86_vaes_avx512 kernel's bulk loops. 32 blocks (eight 512-bit vectors) per
// iteration: VAESENC has a latency of about 4 cycles and a throughput of about one
// 512-bit instruction per cycle on the cores we measured (docs/PERFORMANCE.md), so
// eight independent vectors keep the AES unit busy where four left it idle half the
// time. While VAES runs the rounds of one group, VPCLMULQDQ hashes 32 other
// ciphertext blocks (the previous group's, kept in registers, when sealing; this
// group's input when opening) with Karatsuba's three multiplies per block and one
// reduction per group. Tails of up to 31 blocks use masked loads and stores, which
// neither read nor write (nor fault on) the bytes outside the buffers. Key
// expansion, single blocks and GHASH of AAD are the shared x86 code
// (crypto/x86_common).
//
// GCC 12's AVX-512 intrinsics make their "undefined" operands by initializing a
// variable from itself (`__m512i __Y = __Y;`), which -Wuninitialized then reports
// in every caller; later GCC releases fixed the header. Nothing here reads an
// uninitialized value: the instructions ignore those operands.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include "crypto/kernel/kernel.h"
#include "crypto/x86_common/clmul.h"
#include "crypto/x86_common/x86_schedule.h"
#include "crypto/x86_vaes/x86_vaes.h"

#define SEALBOX_X86_VAES512                                    \
  __attribute__((                                              \
      target("sse2,ssse3,aes,pclmul,avx,avx2,vaes,vpclmulqdq," \
             "avx512f,avx512bw,avx512vl")))

namespace sealbox::crypto::kernel {
namespace {

using x86::Schedule;

constexpr size_t kLanes = 4;                  // blocks per vector
constexpr size_t kVectors = 8;                // vectors per iteration
constexpr size_t kGroup = kLanes * kVectors;  // blocks per iteration
constexpr size_t kGroupBytes = kGroup * kBlockBytes;
constexpr size_t kVectorBytes = kLanes * kBlockBytes;

SEALBOX_X86_VAES512 inline __m512i Broadcast(__m128i block) {
  return _mm512_broadcast_i32x4(block);
}

SEALBOX_X86_VAES512 inline __m512i ByteReverse(__m512i v) {
  return _mm512_shuffle_epi8(v, Broadcast(x86::ByteReverseMask()));
}

// Byte mask covering the first `blocks` (<= 4) blocks of a vector.
inline __mmask64 BlocksMask(size_t blocks) {
  return blocks >= kLanes ? ~__mmask64{0} : (__mmask64{1} << (16 * blocks)) - 1;
}

// The XOR of a vector's four 128-bit lanes.
SEALBOX_X86_VAES512 inline __m128i XorLanes(__m512i v) {
  const __m256i half = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  return _mm_xor_si128(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
}

// Unreduced products summed lane by lane, Karatsuba-style as in clmul.h's Product:
// mid holds the sum of (x0 ^ x1) * (h0 ^ h1) until Reduce recovers the middle term.
// VPCLMULQDQ issues at half VAESENC's rate, so three multiplies per block instead
// of four matter. Value-initialize (`WideProduct p{};`) to start from zero.
struct WideProduct {
  __m512i lo, mid, hi;
};

// p += x * h lane by lane; hk holds (h0 ^ h1) in each lane's low half
// (Schedule::h_karatsuba).
SEALBOX_X86_VAES512 inline void MulAdd(WideProduct& p, __m512i x, __m512i h, __m512i hk) {
  p.lo = _mm512_xor_si512(p.lo, _mm512_clmulepi64_epi128(x, h, 0x00));
  p.hi = _mm512_xor_si512(p.hi, _mm512_clmulepi64_epi128(x, h, 0x11));
  const __m512i folded = _mm512_xor_si512(x, _mm512_shuffle_epi32(x, _MM_PERM_BADC));
  p.mid = _mm512_xor_si512(p.mid, _mm512_clmulepi64_epi128(folded, hk, 0x00));
}

// Reduces each lane (the middle term folded in, then the Montgomery steps of
// clmul.h on all four lanes at once), then adds the lanes: reduction is linear.
SEALBOX_X86_VAES512 inline __m128i Reduce(const WideProduct& p) {
  const __m512i mid = _mm512_ternarylogic_epi64(p.mid, p.lo, p.hi, 0x96);
  const __m512i lo = _mm512_xor_si512(p.lo, _mm512_bslli_epi128(mid, 8));
  const __m512i hi = _mm512_xor_si512(p.hi, _mm512_bsrli_epi128(mid, 8));
  const __m512i poly = Broadcast(x86::PolyvalConstant());
  const __m512i t = _mm512_xor_si512(_mm512_shuffle_epi32(lo, _MM_PERM_BADC),
                                     _mm512_clmulepi64_epi128(lo, poly, 0x10));
  return XorLanes(_mm512_ternarylogic_epi64(_mm512_shuffle_epi32(t, _MM_PERM_BADC),
                                            _mm512_clmulepi64_epi128(t, poly, 0x10), hi, 0x96));
}

// A group's blocks, one vector per kLanes blocks.
using GroupVectors = __m512i[kVectors];

// One group of 32 blocks. With kCrypt, CTR: `result` = `text` ^ AES(counters).
// With kHash, `acc` absorbs the 32 ciphertext blocks `hashed` (GCM byte order), with
// one reduction: the first block is multiplied by H'^32, the last by H'^1. The round
// count is fixed at compile time, so the rounds unroll and the multiplies sit
// between them. The caller loads and stores, so that a sealed group's ciphertext
// stays in registers to be hashed during the next group's rounds.
template <int kRounds, bool kCrypt, bool kHash>
SEALBOX_X86_VAES512 inline void Group(const Schedule& s, __m512i& counters, __m128i& acc,
                                      const GroupVectors& hashed, const uint8_t* in, uint8_t* out,
                                      GroupVectors& result) {
  __m512i b[kVectors];
  if (kCrypt) {
    const __m512i increment = Broadcast(_mm_set_epi32(0, 0, 0, static_cast<int>(kLanes)));
    const __m512i key0 = Broadcast(s.round_keys[0]);
#pragma GCC unroll 8
    for (size_t j = 0; j < kVectors; ++j) {
      b[j] = _mm512_xor_si512(ByteReverse(counters), key0);
      counters = _mm512_add_epi32(counters, increment);
    }
  }

  __m512i x[kVectors];
  WideProduct p{};
  if (kHash) {
#pragma GCC unroll 8
    for (size_t j = 0; j < kVectors; ++j) x[j] = ByteReverse(hashed[j]);
    x[0] = _mm512_xor_si512(x[0], _mm512_zextsi128_si512(acc));
  }

#pragma GCC unroll 14
  for (int r = 1; r < kRounds; ++r) {
    if (kCrypt) {
      const __m512i key = Broadcast(s.round_keys[r]);
#pragma GCC unroll 8
      for (size_t j = 0; j < kVectors; ++j) b[j] = _mm512_aesenc_epi128(b[j], key);
    }
    if (kHash && r <= static_cast<int>(kVectors)) {
      const size_t j = static_cast<size_t>(r - 1);
      MulAdd(p, x[j], _mm512_load_si512(&s.h_powers[j * kLanes]),
             _mm512_load_si512(&s.h_karatsuba[j * kLanes]));
    }
  }
  if (kHash) acc = Reduce(p);

  if (kCrypt) {
    const __m512i last = Broadcast(s.round_keys[kRounds]);
#pragma GCC unroll 8
    for (size_t j = 0; j < kVectors; ++j) {
      result[j] = _mm512_xor_si512(_mm512_loadu_si512(in + j * kVectorBytes),
                                   _mm512_aesenclast_epi128(b[j], last));
      _mm512_storeu_si512(out + j * kVectorBytes, result[j]);
    }
  }
}

// `acc` absorbs n (1..kPowers) blocks at `in`, with one reduction.
SEALBOX_X86_VAES512 __m128i GhashTail(const Schedule& s, __m128i acc, const uint8_t* in, size_t n) {
  WideProduct p{};
  const __m128i* powers = &s.h_powers[x86::kPowers - n];
  const __m128i* karatsuba = &s.h_karatsuba[x86::kPowers - n];
  for (size_t done = 0; done < n; done += kLanes) {
    const __mmask64 mask = BlocksMask(n - done);
    __m512i x = ByteReverse(_mm512_maskz_loadu_epi8(mask, in + done * kBlockBytes));
    if (done == 0) x = _mm512_xor_si512(x, _mm512_zextsi128_si512(acc));
    MulAdd(p, x, _mm512_maskz_loadu_epi8(mask, powers + done),
           _mm512_maskz_loadu_epi8(mask, karatsuba + done));
  }
  return Reduce(p);
}

// CTR over the n (< 32) blocks of a tail, four at a time.
SEALBOX_X86_VAES512 void CtrTail(const Schedule& s, __m512i counters, const uint8_t* in,
                                 uint8_t* out, size_t n) {
  const __m512i step = Broadcast(_mm_set_epi32(0, 0, 0, static_cast<int>(kLanes)));
  for (size_t done = 0; done < n; done += kLanes) {
    __m512i b = _mm512_xor_si512(ByteReverse(counters), Broadcast(s.round_keys[0]));
    counters = _mm512_add_epi32(counters, step);
    for (int r = 1; r < s.rounds; ++r) {
      b = _mm512_aesenc_epi128(b, Broadcast(s.round_keys[r]));
    }
    b = _mm512_aesenclast_epi128(b, Broadcast(s.round_keys[s.rounds]));
    const __mmask64 mask = BlocksMask(n - done);
    const __m512i text = _mm512_maskz_loadu_epi8(mask, in + done * kBlockBytes);
    _mm512_mask_storeu_epi8(out + done * kBlockBytes, mask, _mm512_xor_si512(text, b));
  }
}

// Every group is hashed with the powers H'^32..H'^1, all that the schedule keeps.
static_assert(kGroup == x86::kPowers);

template <int kRounds, bool kSeal>
SEALBOX_X86_VAES512 void Groups(const Schedule& s, __m512i& counters, __m128i& acc,
                                const uint8_t* in, uint8_t* out, size_t groups) {
  GroupVectors hashed, result;
  if (kSeal) {
    // Group h's ciphertext is hashed from registers during group h + 1's rounds,
    // the last group's alone.
    Group<kRounds, true, false>(s, counters, acc, hashed, in, out, hashed);
    for (size_t h = 1; h < groups; ++h) {
      Group<kRounds, true, true>(s, counters, acc, hashed, in + h * kGroupBytes,
                                 out + h * kGroupBytes, result);
#pragma GCC unroll 8
      for (size_t j = 0; j < kVectors; ++j) hashed[j] = result[j];
    }
    Group<kRounds, false, true>(s, counters, acc, hashed, nullptr, nullptr, result);
  } else {
    for (size_t h = 0; h < groups; ++h) {
      const uint8_t* group_in = in + h * kGroupBytes;
#pragma GCC unroll 8
      for (size_t j = 0; j < kVectors; ++j) {
        hashed[j] = _mm512_loadu_si512(group_in + j * kVectorBytes);
      }
      Group<kRounds, true, true>(s, counters, acc, hashed, group_in, out + h * kGroupBytes, result);
    }
  }
}

template <bool kSeal>
SEALBOX_X86_VAES512 void Blocks(const KeySchedule& schedule, uint8_t counter_bytes[16],
                                uint8_t x[16], const uint8_t* in, uint8_t* out, size_t blocks) {
  const Schedule& s = x86::ScheduleOf(schedule);
  const __m128i reverse = x86::ByteReverseMask();
  const __m128i counter = x86::LoadCounter(counter_bytes);
  __m128i acc = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<__m128i*>(x)), reverse);
  // Lane k counts from counter + k.
  __m512i counters = _mm512_add_epi32(
      Broadcast(counter), _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0));

  const size_t groups = blocks / kGroup;
  if (groups > 0) {
    switch (s.rounds) {
      case 10:
        Groups<10, kSeal>(s, counters, acc, in, out, groups);
        break;
      case 12:
        Groups<12, kSeal>(s, counters, acc, in, out, groups);
        break;
      default:
        Groups<14, kSeal>(s, counters, acc, in, out, groups);
        break;
    }
    in += groups * kGroupBytes;
    out += groups * kGroupBytes;
  }
  const size_t rest = blocks % kGroup;
  if (rest > 0) {
    if (!kSeal) acc = GhashTail(s, acc, in, rest);
    CtrTail(s, counters, in, out, rest);
    if (kSeal) acc = GhashTail(s, acc, out, rest);
  }

  // inc32 `blocks` times (blocks < 2^32 by GCM's limit, enforced by the mode layer).
  x86::StoreCounter(_mm_add_epi32(counter, _mm_set_epi32(0, 0, 0, static_cast<int>(blocks))),
                    counter_bytes);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(x), _mm_shuffle_epi8(acc, reverse));
  _mm256_zeroupper();
}

void SealBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16], const uint8_t* in,
                uint8_t* out, size_t blocks) {
  Blocks<true>(schedule, counter, x, in, out, blocks);
}

void OpenBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16], const uint8_t* in,
                uint8_t* out, size_t blocks) {
  Blocks<false>(schedule, counter, x, in, out, blocks);
}

}  // namespace

const Kernel kX86VaesAvx512Kernel = {
    /*name=*/"x86_vaes_avx512",
    /*constant_time=*/true,
    /*expand_key=*/x86::ExpandKey,
    /*encrypt_block=*/x86::EncryptBlock,
    /*ghash=*/x86::Ghash,
    /*seal_blocks=*/SealBlocks,
    /*open_blocks=*/OpenBlocks,
    /*schedule_bytes=*/x86::kScheduleBytes,
};

}  // namespace sealbox::crypto::kernel
