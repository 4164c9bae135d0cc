// Shoup's 4-bit method: X * H is computed nibble by nibble with Horner's rule,
// starting from the highest-degree nibble; each step multiplies the accumulator
// by x^4 (a 4-bit right shift plus a reduction looked up by the 4 bits shifted
// out) and adds one precomputed multiple of H. 32 steps per block.
// Against a bit-by-bit multiply this is several times faster; OP-TEE's software
// GCM went from about 14 to 23 MiB/s on a HiKey960 when it adopted it.
#include "crypto/table/ghash_4bit.h"

#include <array>

#include "crypto/byte_order/byte_order.h"

namespace sealbox::crypto::kernel::table {
namespace {

// x^128 = x^7 + x^2 + x + 1; in reflected order the right side is 0xE1 in the
// top byte.
constexpr uint64_t kReducedX128 = uint64_t{0xe1} << 56;

// A right shift by 4 drops the coefficients of x^124..x^127, which become
// x^128..x^131. kReduce[bits] is their sum reduced, as the top 16 bits of `hi`:
// bit 3 of `bits` is x^128 (0xE100), bit 0 is x^131 = x^128 * x^3 (0xE100 >> 3).
constexpr std::array<uint16_t, 16> MakeReduce() {
  std::array<uint16_t, 16> reduce{};
  for (int bits = 0; bits < 16; ++bits) {
    for (int b = 0; b < 4; ++b) {
      if (bits & (1 << b)) reduce[bits] ^= static_cast<uint16_t>(0xe100 >> (3 - b));
    }
  }
  return reduce;
}

constexpr std::array<uint16_t, 16> kReduce = MakeReduce();
static_assert(kReduce[1] == 0x1c20 && kReduce[8] == 0xe100 && kReduce[15] == 0xb5e0,
              "GHASH reduction table");

// a * x: one step toward lower bits, folding x^128 back in.
Gf128 TimesX(Gf128 a) {
  const uint64_t carry = a.lo & 1;
  a.lo = (a.lo >> 1) | (a.hi << 63);
  a.hi = (a.hi >> 1) ^ ((0 - carry) & kReducedX128);
  return a;
}

// z = z * x^4 + n * H.
inline void Step(const GhashTable& table, unsigned nibble, uint64_t& hi, uint64_t& lo) {
  const unsigned dropped = lo & 0xf;
  lo = (lo >> 4) | (hi << 60);
  hi = (hi >> 4) ^ (uint64_t{kReduce[dropped]} << 48);
  hi ^= table.times[nibble].hi;
  lo ^= table.times[nibble].lo;
}

// The lowest nibble of `lo` (low half of byte 15) carries the highest degrees.
Gf128 TimesH(const GhashTable& table, Gf128 a) {
  uint64_t hi = 0;
  uint64_t lo = 0;
  for (int shift = 0; shift < 64; shift += 4) Step(table, (a.lo >> shift) & 0xf, hi, lo);
  for (int shift = 0; shift < 64; shift += 4) Step(table, (a.hi >> shift) & 0xf, hi, lo);
  return {hi, lo};
}

}  // namespace

void BuildGhashTable(const uint8_t h[16], GhashTable* table) {
  Gf128* t = table->times;
  t[0] = {0, 0};
  t[8] = {LoadBigEndian64(h), LoadBigEndian64(h + 8)};
  t[4] = TimesX(t[8]);
  t[2] = TimesX(t[4]);
  t[1] = TimesX(t[2]);
  // Every other nibble is a sum of those four.
  for (int power = 2; power < 16; power <<= 1) {
    for (int low = 1; low < power; ++low) {
      t[power + low] = {t[power].hi ^ t[low].hi, t[power].lo ^ t[low].lo};
    }
  }
}

void GhashBlocks(const GhashTable& table, uint8_t x[16], const uint8_t* in, size_t blocks) {
  Gf128 z = {LoadBigEndian64(x), LoadBigEndian64(x + 8)};
  for (size_t i = 0; i < blocks; ++i, in += 16) {
    z.hi ^= LoadBigEndian64(in);
    z.lo ^= LoadBigEndian64(in + 8);
    z = TimesH(table, z);
  }
  StoreBigEndian64(z.hi, x);
  StoreBigEndian64(z.lo, x + 8);
}

}  // namespace sealbox::crypto::kernel::table
