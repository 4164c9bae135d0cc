// The x86_vaes_avx2 kernel's bulk loops: the 512-bit kernel's plan (vaes_avx512.cc)
// on 256-bit vectors for CPUs without usable AVX-512. Sixteen blocks (eight vectors
// of two) per iteration: on AMD Zen 5 (measured with instruction chains) VAESENC ymm
// has a latency of about 4 cycles and issues twice per cycle, so eight independent
// vectors are needed to keep the AES units busy; four left them idle half the time.
// VPCLMULQDQ ymm (latency 5) issues only once per 2 cycles there, so GHASH, not
// AES, bounds this loop: Karatsuba's three multiplies per vector instead of four
// (Schedule::h_karatsuba), and one reduction per run of two groups
// (x86::GhashStep), the 32 powers the schedule keeps. The eight AES states, three product
// accumulators and the block being hashed fill the sixteen YMM registers, so round keys, powers and
// the hashed ciphertext are memory operands (L1 loads, which have ports to spare).
// Tails of up to 15 blocks run two blocks to a vector as well. Key expansion,
// single blocks and GHASH of AAD are the shared x86 code (crypto/x86_common).
#include <immintrin.h>

#include "crypto/kernel/kernel.h"
#include "crypto/x86_common/clmul.h"
#include "crypto/x86_common/x86_schedule.h"
#include "crypto/x86_vaes/x86_vaes.h"

#define SEALBOX_X86_VAES256 \
  __attribute__((target("sse2,ssse3,aes,pclmul,avx,avx2,vaes,vpclmulqdq")))

namespace sealbox::crypto::kernel {
namespace {

using x86::Schedule;

constexpr size_t kLanes = 2;                  // blocks per vector
constexpr size_t kVectors = 8;                // vectors per iteration
constexpr size_t kGroup = kLanes * kVectors;  // blocks per iteration
constexpr size_t kGroupBytes = kGroup * kBlockBytes;
constexpr size_t kVectorBytes = kLanes * kBlockBytes;

// Groups per GHASH reduction: a run hashes 32 blocks, one per power the schedule
// keeps.
constexpr size_t kRun = 2;
static_assert(kRun * kGroup == x86::kPowers);

SEALBOX_X86_VAES256 inline __m256i Broadcast(__m128i block) {
  return _mm256_broadcastsi128_si256(block);
}

SEALBOX_X86_VAES256 inline __m256i ByteReverse(__m256i v) {
  return _mm256_shuffle_epi8(v, Broadcast(x86::ByteReverseMask()));
}

SEALBOX_X86_VAES256 inline __m256i Load(const void* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

SEALBOX_X86_VAES256 inline void Store(void* p, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
}

SEALBOX_X86_VAES256 inline __m128i XorLanes(__m256i v) {
  return _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

// Unreduced products summed lane by lane, Karatsuba-style as in clmul.h's Product.
// Value-initialize (`WideProduct p{};`) to start from zero.
struct WideProduct {
  __m256i lo, mid, hi;
};

// p += x * h lane by lane; hk holds (h0 ^ h1) in each lane's low half
// (Schedule::h_karatsuba).
SEALBOX_X86_VAES256 inline void MulAdd(WideProduct& p, __m256i x, __m256i h, __m256i hk) {
  p.lo = _mm256_xor_si256(p.lo, _mm256_clmulepi64_epi128(x, h, 0x00));
  p.hi = _mm256_xor_si256(p.hi, _mm256_clmulepi64_epi128(x, h, 0x11));
  const __m256i folded = _mm256_xor_si256(x, _mm256_shuffle_epi32(x, 0x4e));
  p.mid = _mm256_xor_si256(p.mid, _mm256_clmulepi64_epi128(folded, hk, 0x00));
}

// Adds the lanes (reduction is linear), then reduces once in 128 bits.
SEALBOX_X86_VAES256 inline __m128i Reduce(const WideProduct& p) {
  x86::Product sum;
  sum.lo = XorLanes(p.lo);
  sum.mid = XorLanes(p.mid);
  sum.hi = XorLanes(p.hi);
  return x86::Reduce(sum);
}

// One group of 16 blocks. With kCrypt, CTR on the blocks at `in` into `out`. With
// kHash, GHASH step `step` (x86::GhashStep) over the 16 ciphertext blocks at
// `hashed` (read before `out` is written), the products carried in `pending`
// between the groups of a run. The round count is fixed at compile time, so the
// rounds unroll and the multiplies sit between them.
template <int kRounds, bool kCrypt, bool kHash>
SEALBOX_X86_VAES256 inline void Group(const Schedule& s, __m256i& counters, __m128i& acc,
                                      WideProduct& pending, x86::GhashStep step,
                                      const uint8_t* hashed, const uint8_t* in, uint8_t* out) {
  static_assert(kRounds - 1 >= static_cast<int>(kVectors));
  __m256i b[kVectors];
  if (kCrypt) {
    const __m256i increment = Broadcast(_mm_set_epi32(0, 0, 0, static_cast<int>(kLanes)));
    const __m256i key0 = Broadcast(s.round_keys[0]);
#pragma GCC unroll 8
    for (size_t j = 0; j < kVectors; ++j) {
      b[j] = _mm256_xor_si256(ByteReverse(counters), key0);
      counters = _mm256_add_epi32(counters, increment);
    }
  }

  WideProduct p{};
  if (kHash && !step.first) p = pending;
#pragma GCC unroll 14
  for (int r = 1; r < kRounds; ++r) {
    if (kCrypt) {
      const __m256i key = Broadcast(s.round_keys[r]);
#pragma GCC unroll 8
      for (size_t j = 0; j < kVectors; ++j) b[j] = _mm256_aesenc_epi128(b[j], key);
    }
    if (kHash && r <= static_cast<int>(kVectors)) {
      const size_t j = static_cast<size_t>(r - 1);
      __m256i x = ByteReverse(Load(hashed + j * kVectorBytes));
      if (j == 0 && step.first) x = _mm256_xor_si256(x, _mm256_zextsi128_si256(acc));
      const size_t power = step.power_index + j * kLanes;
      MulAdd(p, x, Load(&s.h_powers[power]), Load(&s.h_karatsuba[power]));
      // Sum each product now, rather than let GCC compute them all first and
      // spill them (only sixteen YMM registers).
      asm("" : "+x"(p.lo), "+x"(p.mid), "+x"(p.hi));
    }
  }
  if (kHash) {
    if (step.last) {
      acc = Reduce(p);
    } else {
      pending = p;
    }
  }

  if (kCrypt) {
    const __m256i last = Broadcast(s.round_keys[kRounds]);
#pragma GCC unroll 8
    for (size_t j = 0; j < kVectors; ++j) {
      const __m256i text = Load(in + j * kVectorBytes);
      Store(out + j * kVectorBytes, _mm256_xor_si256(text, _mm256_aesenclast_epi128(b[j], last)));
    }
  }
}

template <int kRounds, bool kSeal>
SEALBOX_X86_VAES256 void Groups(const Schedule& s, __m256i& counters, __m128i& acc,
                                const uint8_t* in, uint8_t* out, size_t groups) {
  WideProduct pending{};
  if (kSeal) {
    // Group g's ciphertext is hashed during group g + 1's rounds, the last
    // group's alone. It is reloaded from `out` (stored just before, so forwarded
    // or in L1): sixteen YMM registers cannot also hold eight vectors of it.
    Group<kRounds, true, false>(s, counters, acc, pending, {}, nullptr, in, out);
    for (size_t g = 1; g < groups; ++g) {
      // Hide where `hashed` points, so that the compiler reloads the ciphertext
      // it just stored rather than holding it in registers.
      const uint8_t* hashed = out + (g - 1) * kGroupBytes;
      asm("" : "+r"(hashed));
      Group<kRounds, true, true>(s, counters, acc, pending,
                                 x86::StepOf(g - 1, groups, kRun, kGroup), hashed,
                                 in + g * kGroupBytes, out + g * kGroupBytes);
    }
    Group<kRounds, false, true>(s, counters, acc, pending,
                                x86::StepOf(groups - 1, groups, kRun, kGroup),
                                out + (groups - 1) * kGroupBytes, nullptr, nullptr);
  } else {
    for (size_t g = 0; g < groups; ++g) {
      Group<kRounds, true, true>(s, counters, acc, pending, x86::StepOf(g, groups, kRun, kGroup),
                                 in + g * kGroupBytes, in + g * kGroupBytes, out + g * kGroupBytes);
    }
  }
}

// `acc` absorbs n (1..kGroup) blocks at `in`, two to a vector, with one reduction.
// An odd last block fills the low lane and zeroes the high one.
SEALBOX_X86_VAES256 __m128i GhashTail(const Schedule& s, __m128i acc, const uint8_t* in, size_t n) {
  WideProduct p{};
  const size_t first = x86::kPowers - n;
  for (size_t done = 0; done < n; done += kLanes) {
    const uint8_t* block = in + done * kBlockBytes;
    const __m128i* power = &s.h_powers[first + done];
    const __m128i* karatsuba = &s.h_karatsuba[first + done];
    __m256i x, h, hk;
    if (n - done >= kLanes) {
      x = ByteReverse(Load(block));
      h = Load(power);
      hk = Load(karatsuba);
    } else {
      x = ByteReverse(
          _mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block))));
      h = _mm256_zextsi128_si256(_mm_load_si128(power));
      hk = _mm256_zextsi128_si256(_mm_load_si128(karatsuba));
    }
    if (done == 0) x = _mm256_xor_si256(x, _mm256_zextsi128_si256(acc));
    MulAdd(p, x, h, hk);
  }
  return Reduce(p);
}

// CTR over the n (< kGroup) blocks of a tail, two at a time; an odd last block
// takes the low lane.
SEALBOX_X86_VAES256 void CtrTail(const Schedule& s, __m256i counters, const uint8_t* in,
                                 uint8_t* out, size_t n) {
  const __m256i step = Broadcast(_mm_set_epi32(0, 0, 0, static_cast<int>(kLanes)));
  for (size_t done = 0; done < n; done += kLanes) {
    __m256i b = _mm256_xor_si256(ByteReverse(counters), Broadcast(s.round_keys[0]));
    counters = _mm256_add_epi32(counters, step);
    for (int r = 1; r < s.rounds; ++r) {
      b = _mm256_aesenc_epi128(b, Broadcast(s.round_keys[r]));
    }
    b = _mm256_aesenclast_epi128(b, Broadcast(s.round_keys[s.rounds]));
    const uint8_t* text = in + done * kBlockBytes;
    uint8_t* result = out + done * kBlockBytes;
    if (n - done >= kLanes) {
      Store(result, _mm256_xor_si256(Load(text), b));
    } else {
      const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(result),
                       _mm_xor_si128(t, _mm256_castsi256_si128(b)));
    }
  }
}

template <bool kSeal>
SEALBOX_X86_VAES256 void Blocks(const KeySchedule& schedule, uint8_t counter_bytes[16],
                                uint8_t x[16], const uint8_t* in, uint8_t* out, size_t blocks) {
  const Schedule& s = x86::ScheduleOf(schedule);
  const __m128i reverse = x86::ByteReverseMask();
  const __m128i counter = x86::LoadCounter(counter_bytes);
  __m128i acc = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<__m128i*>(x)), reverse);
  // Lane k counts from counter + k.
  __m256i counters = _mm256_add_epi32(Broadcast(counter), _mm256_set_epi32(0, 0, 0, 1, 0, 0, 0, 0));

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

const Kernel kX86VaesAvx2Kernel = {
    /*name=*/"x86_vaes_avx2",
    /*constant_time=*/true,
    /*expand_key=*/x86::ExpandKey,
    /*encrypt_block=*/x86::EncryptBlock,
    /*ghash=*/x86::Ghash,
    /*seal_blocks=*/SealBlocks,
    /*open_blocks=*/OpenBlocks,
    /*schedule_bytes=*/x86::kScheduleBytes,
};

}  // namespace sealbox::crypto::kernel
