// The x86_vaes_avx2 kernel's bulk loops: the 512-bit kernel's plan (vaes_avx512.cc)
// on 256-bit vectors for CPUs without usable AVX-512. Eight blocks (four vectors of
// two) per iteration, with one reduction per run of four groups (x86::GhashStep);
// the sixteen YMM registers hold the AES state, the products and a round key. Tails
// of up to 7 blocks and everything else are the shared x86 code (crypto/x86_common).
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

constexpr size_t kLanes = 2;                       // blocks per vector
constexpr size_t kVectors = 4;                     // vectors per iteration
constexpr size_t kGroup = kLanes * kVectors;       // blocks per iteration
constexpr size_t kGroupBytes = kGroup * kBlockBytes;
constexpr size_t kVectorBytes = kLanes * kBlockBytes;

SEALBOX_X86_VAES256 inline __m256i Broadcast(__m128i block) {
  return _mm256_broadcastsi128_si256(block);
}

SEALBOX_X86_VAES256 inline __m256i ByteReverse(__m256i v) {
  return _mm256_shuffle_epi8(v, Broadcast(x86::ByteReverseMask()));
}

SEALBOX_X86_VAES256 inline __m256i Load(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

SEALBOX_X86_VAES256 inline __m128i XorLanes(__m256i v) {
  return _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

// Value-initialize (`WideProduct p{};`) to start from zero.
struct WideProduct {
  __m256i lo, mid, hi;
};

SEALBOX_X86_VAES256 inline void MulAdd(WideProduct& p, __m256i x, __m256i h) {
  p.lo = _mm256_xor_si256(p.lo, _mm256_clmulepi64_epi128(x, h, 0x00));
  p.hi = _mm256_xor_si256(p.hi, _mm256_clmulepi64_epi128(x, h, 0x11));
  p.mid = _mm256_xor_si256(p.mid, _mm256_xor_si256(_mm256_clmulepi64_epi128(x, h, 0x01),
                                                   _mm256_clmulepi64_epi128(x, h, 0x10)));
}

SEALBOX_X86_VAES256 inline __m128i Reduce(const WideProduct& p) {
  const __m128i mid = XorLanes(p.mid);
  return x86::MontgomeryReduce(_mm_xor_si128(XorLanes(p.lo), _mm_slli_si128(mid, 8)),
                               _mm_xor_si128(XorLanes(p.hi), _mm_srli_si128(mid, 8)));
}

// One group: CTR on eight blocks at `in` into `out`, while GHASH `step`
// (x86::GhashStep) runs over the eight ciphertext blocks at `hashed` (read before
// `out` is written), the products carried in `pending` between the groups of a run.
template <int kRounds>
SEALBOX_X86_VAES256 inline void Group(const Schedule& s, __m256i& counters,
                                      __m128i& acc, WideProduct& pending,
                                      x86::GhashStep step, const uint8_t* hashed,
                                      const uint8_t* in, uint8_t* out) {
  const __m256i increment = Broadcast(_mm_set_epi32(0, 0, 0, static_cast<int>(kLanes)));
  const __m256i key0 = Broadcast(s.round_keys[0]);
  __m256i b[kVectors];
#pragma GCC unroll 4
  for (size_t j = 0; j < kVectors; ++j) {
    b[j] = _mm256_xor_si256(ByteReverse(counters), key0);
    counters = _mm256_add_epi32(counters, increment);
  }

  WideProduct p{};
  if (!step.first) p = pending;
#pragma GCC unroll 14
  for (int r = 1; r < kRounds; ++r) {
    const __m256i key = Broadcast(s.round_keys[r]);
#pragma GCC unroll 4
    for (size_t j = 0; j < kVectors; ++j) b[j] = _mm256_aesenc_epi128(b[j], key);
    if (r <= static_cast<int>(kVectors)) {
      const size_t j = static_cast<size_t>(r - 1);
      __m256i x = ByteReverse(Load(hashed + j * kVectorBytes));
      if (j == 0 && step.first) x = _mm256_xor_si256(x, _mm256_zextsi128_si256(acc));
      MulAdd(p, x, Load(reinterpret_cast<const uint8_t*>(
                       &s.h_powers[step.power_index + j * kLanes])));
      // Sum each product now, rather than let GCC compute them all first and
      // spill them (only sixteen YMM registers).
      asm("" : "+x"(p.lo), "+x"(p.mid), "+x"(p.hi));
    }
  }
  if (step.last) {
    acc = Reduce(p);
  } else {
    pending = p;
  }

  const __m256i last = Broadcast(s.round_keys[kRounds]);
#pragma GCC unroll 4
  for (size_t j = 0; j < kVectors; ++j) {
    const __m256i text = Load(in + j * kVectorBytes);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j * kVectorBytes),
                        _mm256_xor_si256(text, _mm256_aesenclast_epi128(b[j], last)));
  }
}

// Runs of four groups share one reduction (x86::GhashStep).
constexpr size_t kRun = 4;
static_assert(kRun * kGroup <= x86::kPowers);

template <int kRounds, bool kSeal>
SEALBOX_X86_VAES256 void Groups(const Schedule& s, __m256i& counters, __m128i& acc,
                                const uint8_t* in, uint8_t* out, size_t groups) {
  WideProduct pending{};
  if (kSeal) {
    // Each group's ciphertext is hashed during the next group's rounds, the last
    // after the loop (a run of its own).
    __m128i counter = _mm256_castsi256_si128(counters);
    x86::CtrBlocks(s, counter, in, out, kGroup);
    counters = _mm256_add_epi32(counters, Broadcast(_mm_set_epi32(0, 0, 0, static_cast<int>(kGroup))));
    const size_t hashed_in_loop = groups - 1;
    for (size_t g = 1; g < groups; ++g) {
      // Hide where `hashed` points, so that the compiler reloads the ciphertext
      // it just stored rather than holding it in registers.
      const uint8_t* hashed = out + (g - 1) * kGroupBytes;
      asm("" : "+r"(hashed));
      Group<kRounds>(s, counters, acc, pending,
                     x86::StepOf(g - 1, hashed_in_loop, kRun, kGroup), hashed,
                     in + g * kGroupBytes, out + g * kGroupBytes);
    }
    acc = x86::GhashAggregate(s, acc, out + (groups - 1) * kGroupBytes, kGroup);
  } else {
    for (size_t g = 0; g < groups; ++g) {
      Group<kRounds>(s, counters, acc, pending, x86::StepOf(g, groups, kRun, kGroup),
                     in + g * kGroupBytes, in + g * kGroupBytes, out + g * kGroupBytes);
    }
  }
}

template <bool kSeal>
SEALBOX_X86_VAES256 void Blocks(const KeySchedule& schedule, uint8_t counter_bytes[16],
                                uint8_t x[16], const uint8_t* in, uint8_t* out,
                                size_t blocks) {
  const Schedule& s = x86::ScheduleOf(schedule);
  const __m128i reverse = x86::ByteReverseMask();
  __m128i counter = x86::LoadCounter(counter_bytes);
  __m128i acc = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<__m128i*>(x)), reverse);

  const size_t groups = blocks / kGroup;
  if (groups > 0) {
    // Lane k counts from counter + k.
    __m256i counters = _mm256_add_epi32(Broadcast(counter),
                                        _mm256_set_epi32(0, 0, 0, 1, 0, 0, 0, 0));
    switch (s.rounds) {
      case 10: Groups<10, kSeal>(s, counters, acc, in, out, groups); break;
      case 12: Groups<12, kSeal>(s, counters, acc, in, out, groups); break;
      default: Groups<14, kSeal>(s, counters, acc, in, out, groups); break;
    }
    counter = _mm256_castsi256_si128(counters);
    in += groups * kGroupBytes;
    out += groups * kGroupBytes;
  }
  const size_t rest = blocks % kGroup;
  if (kSeal) {
    x86::CtrBlocks(s, counter, in, out, rest);
    acc = x86::GhashAggregate(s, acc, out, rest);
  } else {
    acc = x86::GhashAggregate(s, acc, in, rest);
    x86::CtrBlocks(s, counter, in, out, rest);
  }

  x86::StoreCounter(counter, counter_bytes);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(x), _mm_shuffle_epi8(acc, reverse));
  _mm256_zeroupper();
}

void SealBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16],
                const uint8_t* in, uint8_t* out, size_t blocks) {
  Blocks<true>(schedule, counter, x, in, out, blocks);
}

void OpenBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16],
                const uint8_t* in, uint8_t* out, size_t blocks) {
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
