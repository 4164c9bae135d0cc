// The x86_aesni kernel's bulk loops. Eight blocks per iteration: while the AES
// rounds of one group run, PCLMULQDQ hashes eight other ciphertext blocks (the
// previous group when sealing, this group's input when opening), one block per
// round, with one reduction per group. Key expansion, single blocks, GHASH and
// tails are the shared x86 code (crypto/x86_common).
#include "crypto/x86_aesni/x86_aesni.h"

#include <immintrin.h>

#include "crypto/kernel/kernel.h"
#include "crypto/x86_common/clmul.h"
#include "crypto/x86_common/x86_schedule.h"

namespace sealbox::crypto::kernel {
namespace {

using x86::Schedule;

constexpr size_t kGroup = 8;                   // blocks per iteration
constexpr size_t kGroupBytes = kGroup * kBlockBytes;

// One group: CTR on the eight blocks at `in` into `out`, while `acc` absorbs the
// eight ciphertext blocks at `hashed`, which must not be `out` (its ciphertext is
// written only at the end). Round count fixed at compile time, so the rounds unroll.
template <int kRounds>
SEALBOX_X86_AESNI inline void StitchedGroup(const Schedule& s, __m128i& counter,
                                            __m128i& acc, const uint8_t* hashed,
                                            const uint8_t* in, uint8_t* out) {
  const __m128i reverse = x86::ByteReverseMask();
  __m128i b[kGroup];
#pragma GCC unroll 8
  for (size_t j = 0; j < kGroup; ++j) {
    const __m128i c = _mm_add_epi32(counter, _mm_set_epi32(0, 0, 0, static_cast<int>(j)));
    b[j] = _mm_xor_si128(_mm_shuffle_epi8(c, reverse), s.round_keys[0]);
  }
  counter = _mm_add_epi32(counter, _mm_set_epi32(0, 0, 0, static_cast<int>(kGroup)));

  x86::Product p;
  constexpr size_t kFirstPower = x86::kPowers - kGroup;
#pragma GCC unroll 14
  for (int r = 1; r < kRounds; ++r) {
    const __m128i key = s.round_keys[r];
#pragma GCC unroll 8
    for (size_t j = 0; j < kGroup; ++j) b[j] = _mm_aesenc_si128(b[j], key);
    if (r <= static_cast<int>(kGroup)) {
      const size_t j = static_cast<size_t>(r - 1);
      __m128i x = _mm_shuffle_epi8(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(hashed + 16 * j)), reverse);
      if (j == 0) x = _mm_xor_si128(x, acc);
      x86::MulAdd(p, x, s.h_powers[kFirstPower + j], s.h_karatsuba[kFirstPower + j]);
      // Sum each product now: left to itself GCC computes all 24 products first
      // and spills them, with only sixteen XMM registers.
      asm("" : "+x"(p.lo), "+x"(p.mid), "+x"(p.hi));
    }
  }
  acc = x86::Reduce(p);

  const __m128i last = s.round_keys[kRounds];
#pragma GCC unroll 8
  for (size_t j = 0; j < kGroup; ++j) {
    const __m128i text = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * j));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * j),
                     _mm_xor_si128(text, _mm_aesenclast_si128(b[j], last)));
  }
}

// Whole groups. Sealing hashes each group's ciphertext during the next group's
// rounds, and the last one after the loop.
template <int kRounds, bool kSeal>
SEALBOX_X86_AESNI void Groups(const Schedule& s, __m128i& counter, __m128i& acc,
                              const uint8_t* in, uint8_t* out, size_t groups) {
  if (kSeal) {
    x86::CtrBlocks(s, counter, in, out, kGroup);
    for (size_t g = 1; g < groups; ++g) {
      // Hide where `hashed` points, so that the compiler reloads the ciphertext
      // it just stored instead of keeping eight more blocks in the sixteen XMM
      // registers (which spills GHASH products to the stack).
      const uint8_t* hashed = out + (g - 1) * kGroupBytes;
      asm("" : "+r"(hashed));
      StitchedGroup<kRounds>(s, counter, acc, hashed, in + g * kGroupBytes,
                             out + g * kGroupBytes);
    }
    acc = x86::GhashUpTo16(s, acc, out + (groups - 1) * kGroupBytes, kGroup);
  } else {
    // The ciphertext is read for GHASH before the same group's plaintext is
    // written, so `in == out` is fine.
    for (size_t g = 0; g < groups; ++g) {
      StitchedGroup<kRounds>(s, counter, acc, in + g * kGroupBytes,
                             in + g * kGroupBytes, out + g * kGroupBytes);
    }
  }
}

template <bool kSeal>
SEALBOX_X86_AESNI void Blocks(const KeySchedule& schedule, uint8_t counter_bytes[16],
                              uint8_t x[16], const uint8_t* in, uint8_t* out,
                              size_t blocks) {
  const Schedule& s = x86::ScheduleOf(schedule);
  const __m128i reverse = x86::ByteReverseMask();
  __m128i counter = x86::LoadCounter(counter_bytes);
  __m128i acc = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<__m128i*>(x)), reverse);

  const size_t groups = blocks / kGroup;
  if (groups > 0) {
    switch (s.rounds) {
      case 10: Groups<10, kSeal>(s, counter, acc, in, out, groups); break;
      case 12: Groups<12, kSeal>(s, counter, acc, in, out, groups); break;
      default: Groups<14, kSeal>(s, counter, acc, in, out, groups); break;
    }
    in += groups * kGroupBytes;
    out += groups * kGroupBytes;
  }
  const size_t rest = blocks % kGroup;
  if (kSeal) {
    x86::CtrBlocks(s, counter, in, out, rest);
    acc = x86::GhashUpTo16(s, acc, out, rest);
  } else {
    acc = x86::GhashUpTo16(s, acc, in, rest);
    x86::CtrBlocks(s, counter, in, out, rest);
  }

  x86::StoreCounter(counter, counter_bytes);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(x), _mm_shuffle_epi8(acc, reverse));
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

const Kernel kX86AesniKernel = {
    /*name=*/"x86_aesni",
    /*constant_time=*/true,
    /*expand_key=*/x86::ExpandKey,
    /*encrypt_block=*/x86::EncryptBlock,
    /*ghash=*/x86::Ghash,
    /*seal_blocks=*/SealBlocks,
    /*open_blocks=*/OpenBlocks,
};

}  // namespace sealbox::crypto::kernel
