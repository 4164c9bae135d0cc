// The expanded key of the x86-64 kernels, and the entry points they share: key
// expansion, single-block AES and aggregated GHASH, all with AES-NI and PCLMULQDQ.
// Each kernel adds only its bulk seal/open loops.
#ifndef SEALBOX_CRYPTO_X86_COMMON_X86_SCHEDULE_H_
#define SEALBOX_CRYPTO_X86_COMMON_X86_SCHEDULE_H_

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <new>

#include "crypto/kernel/kernel.h"
#include "crypto/x86_common/clmul.h"

namespace sealbox::crypto::x86 {

// Powers of H' kept: enough for the longest run of blocks sharing one GHASH
// reduction (two groups of 16, or four of 8; see GhashStep).
inline constexpr int kPowers = 32;

// The powers come first so that every group of four is 64-byte aligned for the
// 512-bit kernel.
struct alignas(64) Schedule {
  // Descending, h_powers[i] = H'^(kPowers - i), so that n consecutive blocks
  // multiply by the n consecutive entries from index kPowers - n: the first block
  // by H'^n, the last by H'^1 (clmul.h says what H' is).
  __m128i h_powers[kPowers];
  // Each power's two 64-bit halves XORed, for Karatsuba's middle product.
  __m128i h_karatsuba[kPowers];
  // rounds + 1 round keys (10, 12 or 14 rounds).
  __m128i round_keys[15];
  int rounds;
};
static_assert(alignof(kernel::KeySchedule) >= alignof(Schedule));
// Every x86-64 kernel's Kernel::schedule_bytes: 1,280 bytes.
inline constexpr size_t kScheduleBytes = sizeof(Schedule);
static_assert(kScheduleBytes <= kernel::kMaxKeyScheduleBytes);

// The Schedule that ExpandKey placed in `schedule`'s bytes.
inline const Schedule& ScheduleOf(const kernel::KeySchedule& schedule) {
  return *std::launder(reinterpret_cast<const Schedule*>(schedule.bytes));
}

// kernel::Kernel entry points (see kernel.h).
void ExpandKey(const uint8_t* key, size_t key_bytes, kernel::KeySchedule* schedule);
void EncryptBlock(const kernel::KeySchedule& schedule, const uint8_t in[16], uint8_t out[16]);
void Ghash(const kernel::KeySchedule& schedule, uint8_t x[16], const uint8_t* in, size_t blocks);

// For the kernels' own loops and tails.

// AES of one block in registers.
SEALBOX_X86_AESNI inline __m128i EncryptOne(const Schedule& s, __m128i block) {
  block = _mm_xor_si128(block, s.round_keys[0]);
  for (int r = 1; r < s.rounds; ++r) block = _mm_aesenc_si128(block, s.round_keys[r]);
  return _mm_aesenclast_si128(block, s.round_keys[s.rounds]);
}

// The POLYVAL-form accumulator `acc` absorbs n <= kPowers blocks at `in` (GCM byte
// order) with one reduction.
SEALBOX_X86_AESNI inline __m128i GhashAggregate(const Schedule& s, __m128i acc, const uint8_t* in,
                                                size_t n) {
  const __m128i reverse = ByteReverseMask();
  Product p;
  const size_t first = kPowers - n;
  for (size_t j = 0; j < n; ++j) {
    __m128i block =
        _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * j)), reverse);
    if (j == 0) block = _mm_xor_si128(block, acc);
    MulAdd(p, block, s.h_powers[first + j], s.h_karatsuba[first + j]);
  }
  return n == 0 ? acc : Reduce(p);
}

// Where one group of a bulk loop stands in GHASH's sequence. The loops hash groups
// of G blocks, and reduce only once per run of R groups (R * G <= kPowers): the
// first group of a run absorbs the accumulator, each multiplies its blocks by the
// powers of H' for its place in the run, and the last reduces. Then the reduced
// accumulator, the only value carried from one run to the next, is on the critical
// path once per run instead of once per group. A shorter first run takes the
// remainder, so the last group of the message always ends a run.
struct GhashStep {
  size_t power_index;  // into Schedule::h_powers, for this group's first block
  bool first;          // absorbs the accumulator
  bool last;           // reduces into the accumulator
};

// The step of group h (0-based) of `groups`, for runs of `run` groups of `group`
// blocks.
inline GhashStep StepOf(size_t h, size_t groups, size_t run, size_t group) {
  const size_t short_run = groups % run;
  size_t place, length;
  if (h < short_run) {
    place = h;
    length = short_run;
  } else {
    place = (h - short_run) % run;
    length = run;
  }
  return {kPowers - (length - place) * group, place == 0, place == length - 1};
}

// Counters: a counter block byte-reversed, so that GCM's big-endian 32-bit counter
// is the low dword and inc32 is a 32-bit add (wrapping as inc32 does).
SEALBOX_X86_AESNI inline __m128i LoadCounter(const uint8_t counter[16]) {
  return _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(counter)),
                          ByteReverseMask());
}
SEALBOX_X86_AESNI inline void StoreCounter(__m128i counter, uint8_t out[16]) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi8(counter, ByteReverseMask()));
}

// CTR over n blocks (any n; the kernels use it for tails): out = in ^ AES(counter++).
// No GHASH. `in` may equal `out`.
SEALBOX_X86_AESNI inline void CtrBlocks(const Schedule& s, __m128i& counter, const uint8_t* in,
                                        uint8_t* out, size_t n) {
  const __m128i reverse = ByteReverseMask();
  const __m128i one = _mm_set_epi32(0, 0, 0, 1);
  for (size_t j = 0; j < n; ++j) {
    const __m128i keystream = EncryptOne(s, _mm_shuffle_epi8(counter, reverse));
    counter = _mm_add_epi32(counter, one);
    const __m128i text = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * j));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * j), _mm_xor_si128(text, keystream));
  }
}

}  // namespace sealbox::crypto::x86

#endif  // SEALBOX_CRYPTO_X86_COMMON_X86_SCHEDULE_H_
