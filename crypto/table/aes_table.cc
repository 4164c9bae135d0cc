// T-table AES: SubBytes, ShiftRows and MixColumns of one column fold into four
// lookups in 1 KiB tables, so a round is 16 lookups and 16 XORs. The tables are
// derived at compile time from the field arithmetic of FIPS-197, not typed in.
#include "crypto/table/aes_table.h"

#include <array>

#include "crypto/byte_order/byte_order.h"

namespace sealbox::crypto::kernel::table {
namespace {

// Multiplication by x in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1.
constexpr uint8_t Xtime(uint8_t a) {
  return static_cast<uint8_t>((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
}

constexpr uint8_t GfMultiply(uint8_t a, uint8_t b) {
  uint8_t product = 0;
  for (; b != 0; b >>= 1) {
    if (b & 1) product ^= a;
    a = Xtime(a);
  }
  return product;
}

// a^254 is a^-1 for a != 0, and 0 for a == 0, as SubBytes wants.
constexpr uint8_t GfInverse(uint8_t a) {
  uint8_t result = 1;
  for (int exponent = 254; exponent != 0; exponent >>= 1) {
    if (exponent & 1) result = GfMultiply(result, a);
    a = GfMultiply(a, a);
  }
  return result;
}

constexpr uint8_t RotateLeft8(uint8_t b, int n) {
  return static_cast<uint8_t>((b << n) | (b >> (8 - n)));
}

// FIPS-197 5.1.1: the multiplicative inverse, then the affine map.
constexpr std::array<uint8_t, 256> MakeSbox() {
  std::array<uint8_t, 256> sbox{};
  for (int i = 0; i < 256; ++i) {
    const uint8_t b = GfInverse(static_cast<uint8_t>(i));
    sbox[i] =
        b ^ RotateLeft8(b, 1) ^ RotateLeft8(b, 2) ^ RotateLeft8(b, 3) ^ RotateLeft8(b, 4) ^ 0x63;
  }
  return sbox;
}

constexpr std::array<uint8_t, 256> kSbox = MakeSbox();
static_assert(kSbox[0x00] == 0x63 && kSbox[0x53] == 0xed && kSbox[0xff] == 0x16,
              "S-box disagrees with FIPS-197 Figure 7");

constexpr uint32_t RotateRight32(uint32_t w, int n) {
  return n == 0 ? w : (w >> n) | (w << (32 - n));
}

// Te0[a] is the column MixColumns makes from S(a) in row 0: (2s, s, s, 3s).
// A byte in row r gives the same column rotated down r rows: Te_r = Te0 >>> 8r.
constexpr std::array<uint32_t, 256> MakeTe(int row) {
  std::array<uint32_t, 256> table{};
  for (int i = 0; i < 256; ++i) {
    const uint8_t s = kSbox[i];
    const uint32_t column =
        uint32_t{GfMultiply(s, 2)} << 24 | uint32_t{s} << 16 | uint32_t{s} << 8 | GfMultiply(s, 3);
    table[i] = RotateRight32(column, 8 * row);
  }
  return table;
}

alignas(64) constexpr std::array<uint32_t, 256> kTe0 = MakeTe(0);
alignas(64) constexpr std::array<uint32_t, 256> kTe1 = MakeTe(1);
alignas(64) constexpr std::array<uint32_t, 256> kTe2 = MakeTe(2);
alignas(64) constexpr std::array<uint32_t, 256> kTe3 = MakeTe(3);

constexpr uint32_t Byte(uint32_t w, int row) { return (w >> (24 - 8 * row)) & 0xff; }

uint32_t SubWord(uint32_t w) {
  return uint32_t{kSbox[Byte(w, 0)]} << 24 | uint32_t{kSbox[Byte(w, 1)]} << 16 |
         uint32_t{kSbox[Byte(w, 2)]} << 8 | kSbox[Byte(w, 3)];
}

// One full round's output column: ShiftRows takes row r from column c + r.
inline uint32_t RoundColumn(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t round_key) {
  return kTe0[Byte(a, 0)] ^ kTe1[Byte(b, 1)] ^ kTe2[Byte(c, 2)] ^ kTe3[Byte(d, 3)] ^ round_key;
}

// The last round has no MixColumns: plain S-box bytes.
inline uint32_t FinalColumn(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t round_key) {
  return (uint32_t{kSbox[Byte(a, 0)]} << 24 | uint32_t{kSbox[Byte(b, 1)]} << 16 |
          uint32_t{kSbox[Byte(c, 2)]} << 8 | kSbox[Byte(d, 3)]) ^
         round_key;
}

}  // namespace

// FIPS-197 5.2.
void ExpandAesKey(const uint8_t* key, size_t key_bytes, AesRoundKeys* keys) {
  const size_t nk = key_bytes / 4;
  keys->rounds = static_cast<int>(nk) + 6;
  const size_t total = 4 * (static_cast<size_t>(keys->rounds) + 1);
  uint32_t* w = keys->words;
  for (size_t i = 0; i < nk; ++i) w[i] = LoadBigEndian32(key + 4 * i);
  uint8_t rcon = 1;
  for (size_t i = nk; i < total; ++i) {
    uint32_t temp = w[i - 1];
    if (i % nk == 0) {
      temp = SubWord(RotateRight32(temp, 24)) ^ uint32_t { rcon } << 24;  // RotWord
      rcon = Xtime(rcon);
    } else if (nk > 6 && i % nk == 4) {
      temp = SubWord(temp);
    }
    w[i] = w[i - nk] ^ temp;
  }
}

void EncryptAesBlock(const AesRoundKeys& keys, const uint8_t in[16], uint8_t out[16]) {
  const uint32_t* rk = keys.words;
  uint32_t s0 = LoadBigEndian32(in) ^ rk[0];
  uint32_t s1 = LoadBigEndian32(in + 4) ^ rk[1];
  uint32_t s2 = LoadBigEndian32(in + 8) ^ rk[2];
  uint32_t s3 = LoadBigEndian32(in + 12) ^ rk[3];
  for (int round = 1; round < keys.rounds; ++round) {
    rk += 4;
    const uint32_t t0 = RoundColumn(s0, s1, s2, s3, rk[0]);
    const uint32_t t1 = RoundColumn(s1, s2, s3, s0, rk[1]);
    const uint32_t t2 = RoundColumn(s2, s3, s0, s1, rk[2]);
    const uint32_t t3 = RoundColumn(s3, s0, s1, s2, rk[3]);
    s0 = t0;
    s1 = t1;
    s2 = t2;
    s3 = t3;
  }
  rk += 4;
  StoreBigEndian32(FinalColumn(s0, s1, s2, s3, rk[0]), out);
  StoreBigEndian32(FinalColumn(s1, s2, s3, s0, rk[1]), out + 4);
  StoreBigEndian32(FinalColumn(s2, s3, s0, s1, rk[2]), out + 8);
  StoreBigEndian32(FinalColumn(s3, s0, s1, s2, rk[3]), out + 12);
}

}  // namespace sealbox::crypto::kernel::table
