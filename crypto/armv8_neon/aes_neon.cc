// AES with the S-box in registers (the idea of Linux's plain-NEON AES, seed 004;
// this code is written from FIPS-197). Here: the key schedule, one-block
// encryption and the counter-mode tails, with intrinsics; aes_neon_core.S has the
// four-block counter-mode loop, the same round by hand.
//
// One round on a 16-byte state x, with a round key k:
//   SubBytes   y = S(x): the 256-byte S-box sits in v-registers as four 64-byte
//              tables; tbl looks up indices 0..63 in the first, and tbx looks up
//              x-64, x-128, x-192 in the others (tbx leaves a lane alone when its
//              index is out of range, so each byte is taken from exactly one table).
//   ShiftRows  u = SR(y), one tbl with a constant permutation.
//   MixColumns with b = u rotated by one byte inside each column (one tbl, fused
//              with ShiftRows) and t = u ^ b, each output byte is
//              2t[i] ^ b[i] ^ t[i+2] (indices within the column), that is
//              xtime(t) ^ b ^ rev32.8h(t).
// Every step is register arithmetic or tbl/tbx over registers: no memory address
// and no branch depends on the key or the data.
#include "crypto/armv8_neon/aes_neon.h"

#include <arm_neon.h>

#include <array>
#include <cstring>

#include "crypto/byte_order/byte_order.h"
#include "crypto/secret/secure_wipe.h"

#if defined(__AARCH64EB__)
#error "armv8_neon assumes little-endian AArch64"
#endif

namespace sealbox::crypto::kernel::armv8_neon {
namespace {

// --- Constants, derived from their definitions at compile time. ---

constexpr uint8_t Xtime(uint8_t a) { return static_cast<uint8_t>((a << 1) ^ ((a >> 7) * 0x1b)); }

constexpr uint8_t GfProduct(uint8_t a, uint8_t b) {
  uint8_t product = 0;
  for (int bit = 0; bit < 8; ++bit) {
    if ((b >> bit) & 1) product ^= a;
    a = Xtime(a);
  }
  return product;
}

// FIPS-197 5.1.1: b = a^254 (the inverse, 0 for 0), then the affine map.
constexpr std::array<uint8_t, 256> MakeSbox() {
  std::array<uint8_t, 256> sbox{};
  for (int a = 0; a < 256; ++a) {
    uint8_t b = 1;
    for (int i = 0; i < 254; ++i) b = GfProduct(b, static_cast<uint8_t>(a));
    uint8_t s = 0x63;
    for (int shift = 0; shift < 5; ++shift) {
      s ^= static_cast<uint8_t>((b << shift) | (b >> ((8 - shift) & 7)));
    }
    sbox[a] = s;
  }
  return sbox;
}

constexpr std::array<uint8_t, 256> kSbox = MakeSbox();
static_assert(kSbox[0x00] == 0x63 && kSbox[0x01] == 0x7c && kSbox[0x53] == 0xed &&
                  kSbox[0xff] == 0x16,
              "S-box disagrees with FIPS-197 Figure 7");

// State byte 4c + r is row r of column c. ShiftRows moves row r left by r columns:
// out[4c + r] = in[4((c + r) % 4) + r].
constexpr std::array<uint8_t, 16> MakeShiftRows() {
  std::array<uint8_t, 16> p{};
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 4; ++r) p[4 * c + r] = static_cast<uint8_t>(4 * ((c + r) % 4) + r);
  }
  return p;
}

// ShiftRows followed by a rotation of each column by one row:
// out[4c + r] = SR(in)[4c + (r + 1) % 4].
constexpr std::array<uint8_t, 16> MakeRotatedShiftRows() {
  const std::array<uint8_t, 16> sr = MakeShiftRows();
  std::array<uint8_t, 16> p{};
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 4; ++r) p[4 * c + r] = sr[4 * c + (r + 1) % 4];
  }
  return p;
}

constexpr std::array<uint8_t, 16> kShiftRows = MakeShiftRows();
constexpr std::array<uint8_t, 16> kRotatedShiftRows = MakeRotatedShiftRows();

constexpr std::array<uint8_t, kAesTablesBytes> MakeAesTables() {
  std::array<uint8_t, kAesTablesBytes> t{};
  for (int i = 0; i < 256; ++i) t[i] = kSbox[i];
  for (int i = 0; i < 16; ++i) {
    t[256 + i] = kShiftRows[i];
    t[272 + i] = kRotatedShiftRows[i];
  }
  return t;
}

// --- The register-resident cipher. ---

struct Sbox {
  uint8x16x4_t part[4];  // part[i] holds S-box entries 64i..64i+63
};

struct Constants {
  uint8x16_t c40;                 // 0x40 in every byte: steps the S-box index
  uint8x16_t c1b;                 // 0x1b in every byte: the xtime reduction
  uint8x16_t shift_rows;          // kShiftRows
  uint8x16_t rotated_shift_rows;  // kRotatedShiftRows
};

inline Sbox LoadSbox() {
  Sbox s;
  for (int i = 0; i < 4; ++i) s.part[i] = vld1q_u8_x4(armv8_neon_aes_tables.data() + 64 * i);
  return s;
}

inline Constants LoadConstants() {
  return {vdupq_n_u8(0x40), vdupq_n_u8(0x1b), vld1q_u8(armv8_neon_aes_tables.data() + 256),
          vld1q_u8(armv8_neon_aes_tables.data() + 272)};
}

// y = S-box(x), each byte: one tbl and three tbx over the 16 table registers.
inline uint8x16_t SubBytes(const Sbox& sbox, const Constants& c, uint8x16_t x) {
  uint8x16_t y = vqtbl4q_u8(sbox.part[0], x);
  for (int i = 1; i < 4; ++i) {
    x = vsubq_u8(x, c.c40);
    y = vqtbx4q_u8(y, sbox.part[i], x);
  }
  return y;
}

// MixColumns(ShiftRows(SubBytes(x))) ^ key.
inline uint8x16_t FullRound(const Sbox& sbox, const Constants& c, uint8x16_t key, uint8x16_t x) {
  const uint8x16_t y = SubBytes(sbox, c, x);
  const uint8x16_t b = vqtbl1q_u8(y, c.rotated_shift_rows);
  const uint8x16_t t = veorq_u8(vqtbl1q_u8(y, c.shift_rows), b);
  const uint8x16_t reduce = vandq_u8(vcltzq_s8(vreinterpretq_s8_u8(t)), c.c1b);
  const uint8x16_t t2 = vreinterpretq_u8_u16(vrev32q_u16(vreinterpretq_u16_u8(t)));
  return veorq_u8(veorq_u8(veorq_u8(b, key), veorq_u8(t2, reduce)), vaddq_u8(t, t));
}

// ShiftRows(SubBytes(x)) ^ key.
inline uint8x16_t FinalRound(const Sbox& sbox, const Constants& c, uint8x16_t key, uint8x16_t x) {
  return veorq_u8(vqtbl1q_u8(SubBytes(sbox, c, x), c.shift_rows), key);
}

template <int kRounds>
uint8x16_t Encrypt(const Sbox& sbox, const Constants& c, const uint8_t* round_keys, uint8x16_t x) {
  x = veorq_u8(x, vld1q_u8(round_keys));
#pragma GCC unroll 14
  for (int r = 1; r < kRounds; ++r) {
    x = FullRound(sbox, c, vld1q_u8(round_keys + 16 * r), x);
  }
  return FinalRound(sbox, c, vld1q_u8(round_keys + 16 * kRounds), x);
}

// SubWord: the four bytes of w (byte 0 = least significant) through the S-box.
inline uint32_t SubWord(const Sbox& sbox, const Constants& c, uint32_t w) {
  const uint8x16_t v = vreinterpretq_u8_u32(vdupq_n_u32(w));
  return vgetq_lane_u32(vreinterpretq_u32_u8(SubBytes(sbox, c, v)), 0);
}

// FIPS-197 5.2 on words as loaded from memory (byte 0 is the least significant, so
// RotWord is a rotation right by 8). One pass makes kNk words; each index is a
// fixed offset from p, and the only branches are on the pass count. The last pass
// may write up to 64 words (w's size) past the 4 * (kNk + 7) the schedule needs.
template <int kNk>
void ExpandWords(const Sbox& sbox, const Constants& c, uint32_t w[64]) {
  constexpr int kTotal = 4 * (kNk + 7);
  constexpr int kPasses = (kTotal - kNk + kNk - 1) / kNk;
  static_assert(kNk * (1 + kPasses) <= 64, "w is too small for the last pass");
  uint8_t rcon = 1;
  for (uint32_t* p = w + kNk; p < w + kTotal; p += kNk) {
    p[0] = p[-kNk] ^ SubWord(sbox, c, (p[-1] >> 8) | (p[-1] << 24)) ^ rcon;
    rcon = Xtime(rcon);
#pragma GCC unroll 8
    for (int j = 1; j < kNk; ++j) {
      const uint32_t t = (kNk == 8 && j == 4) ? SubWord(sbox, c, p[j - 1]) : p[j - 1];
      p[j] = p[j - kNk] ^ t;
    }
  }
}

}  // namespace

const uint8_t* AesTables() { return armv8_neon_aes_tables.data(); }

void ExpandAesKey(const uint8_t* key, size_t key_bytes, AesKey* out) {
  const Sbox sbox = LoadSbox();
  const Constants c = LoadConstants();
  // Room for the last pass of ExpandWords, which may run past the schedule.
  uint32_t w[64];
  std::memcpy(w, key, key_bytes);
  switch (key_bytes) {
    case 16:
      ExpandWords<4>(sbox, c, w);
      break;
    case 24:
      ExpandWords<6>(sbox, c, w);
      break;
    default:
      ExpandWords<8>(sbox, c, w);
      break;
  }
  out->rounds = static_cast<int>(key_bytes / 4) + 6;
  std::memcpy(out->round_keys, w, 16 * (out->rounds + 1));
  SecureWipe(w, sizeof(w));
}

void AesEncryptBlock(const AesKey& key, const uint8_t in[16], uint8_t out[16]) {
  const Sbox sbox = LoadSbox();
  const Constants c = LoadConstants();
  const uint8x16_t x = vld1q_u8(in);
  const uint8_t* rk = key.round_keys[0];
  switch (key.rounds) {
    case 10:
      vst1q_u8(out, Encrypt<10>(sbox, c, rk, x));
      break;
    case 12:
      vst1q_u8(out, Encrypt<12>(sbox, c, rk, x));
      break;
    default:
      vst1q_u8(out, Encrypt<14>(sbox, c, rk, x));
      break;
  }
}

void AesCtr(const AesKey& key, uint8_t counter[16], const uint8_t* in, uint8_t* out,
            size_t blocks) {
  auto* quads_function = key.rounds == 10   ? armv8_neon_ctr128_blocks
                         : key.rounds == 12 ? armv8_neon_ctr192_blocks
                                            : armv8_neon_ctr256_blocks;
  const uint8_t* rk = key.round_keys[0];
  const size_t whole = blocks / 4;
  if (whole > 0) quads_function(rk, counter, in, out, whole);
  const size_t rest = blocks % 4;
  if (rest == 0) return;
  // The last one to three blocks go through one more 4-block pass on a copy.
  in += 64 * whole;
  out += 64 * whole;
  alignas(16) uint8_t buffer[64] = {};
  uint8_t tail_counter[16];
  std::memcpy(buffer, in, 16 * rest);
  std::memcpy(tail_counter, counter, 16);
  quads_function(rk, tail_counter, buffer, buffer, 1);
  std::memcpy(out, buffer, 16 * rest);
  StoreBigEndian32(LoadBigEndian32(counter + 12) + static_cast<uint32_t>(rest), counter + 12);
  SecureWipe(buffer, sizeof(buffer));
  SecureWipe(tail_counter, sizeof(tail_counter));
}

}  // namespace sealbox::crypto::kernel::armv8_neon

// The constant tables as data in memory, for the assembly loops too: read only
// at fixed offsets (into registers), never indexed by secrets.
alignas(64) const std::array<
    uint8_t, sealbox::crypto::kernel::armv8_neon::kAesTablesBytes> armv8_neon_aes_tables =
    sealbox::crypto::kernel::armv8_neon::MakeAesTables();
