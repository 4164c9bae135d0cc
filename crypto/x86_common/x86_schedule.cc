#include "crypto/x86_common/x86_schedule.h"

#include <cstring>

#include "crypto/secret/secure_wipe.h"

namespace sealbox::crypto::x86 {
namespace {

// FIPS-197 SubWord through AES-NI: with the word in all four columns, ShiftRows
// moves nothing, so the last round's SubBytes leaves SubWord in every column.
SEALBOX_X86_AESNI uint32_t SubWord(uint32_t word) {
  const __m128i state = _mm_set1_epi32(static_cast<int>(word));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_aesenclast_si128(state, _mm_setzero_si128())));
}

// Words as little-endian loads of the key bytes, so RotWord is a right rotation.
uint32_t RotWord(uint32_t word) { return (word >> 8) | (word << 24); }

constexpr uint8_t kRcon[10] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36};

}  // namespace

SEALBOX_X86_AESNI void ExpandKey(const uint8_t* key, size_t key_bytes,
                                 kernel::KeySchedule* schedule) {
  Schedule* s = new (schedule->bytes) Schedule;
  const size_t nk = key_bytes / 4;
  s->rounds = static_cast<int>(nk) + 6;
  const size_t words = 4 * (static_cast<size_t>(s->rounds) + 1);

  uint32_t w[60];
  std::memcpy(w, key, key_bytes);
  for (size_t i = nk; i < words; ++i) {
    uint32_t t = w[i - 1];
    if (i % nk == 0) {
      t = SubWord(RotWord(t)) ^ kRcon[i / nk - 1];
    } else if (nk == 8 && i % nk == 4) {
      t = SubWord(t);
    }
    w[i] = w[i - nk] ^ t;
  }
  std::memcpy(s->round_keys, w, words * 4);
  SecureWipe(w, sizeof(w));

  // H' = ByteReverse(AES_K(0)) * x, then its powers by POLYVAL's product.
  const __m128i h = MulX(_mm_shuffle_epi8(EncryptOne(*s, _mm_setzero_si128()), ByteReverseMask()));
  __m128i power = h;
  for (int i = kPowers - 1; i >= 0; --i) {
    s->h_powers[i] = power;
    s->h_karatsuba[i] = _mm_xor_si128(power, _mm_shuffle_epi32(power, 0x4e));
    power = Dot(power, h);
  }
}

SEALBOX_X86_AESNI void EncryptBlock(const kernel::KeySchedule& schedule, const uint8_t in[16],
                                    uint8_t out[16]) {
  const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), EncryptOne(ScheduleOf(schedule), block));
}

SEALBOX_X86_AESNI void Ghash(const kernel::KeySchedule& schedule, uint8_t x[16], const uint8_t* in,
                             size_t blocks) {
  const Schedule& s = ScheduleOf(schedule);
  const __m128i reverse = ByteReverseMask();
  __m128i acc = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<__m128i*>(x)), reverse);
  for (; blocks >= 8; blocks -= 8, in += 8 * 16) acc = GhashAggregate(s, acc, in, 8);
  acc = GhashAggregate(s, acc, in, blocks);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(x), _mm_shuffle_epi8(acc, reverse));
}

}  // namespace sealbox::crypto::x86
