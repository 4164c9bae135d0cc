// Moving a CRC32C state past a run of bytes it did not see: the state after A||B
// is Shift(state after A, |B|) XOR (the state after B from zero), since the CRC
// without its pre- and post-inversion is linear. The hardware kernels use it to run
// three independent streams over three blocks of a buffer and join them.
#ifndef SEALBOX_CRYPTO_CRC32C_CRC32C_SHIFT_H_
#define SEALBOX_CRYPTO_CRC32C_CRC32C_SHIFT_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace sealbox::crypto::crc32c_internal {

// Multiplication of a raw 32-bit state by x^(8 * bytes) mod the polynomial, as four
// byte-indexed tables (4 KiB). Built once per block size.
class Crc32cShift {
 public:
  explicit Crc32cShift(size_t bytes);

  // Out of line: the kernels call it once per three blocks, and it must not be
  // compiled for the kernels' instruction sets.
  uint32_t operator()(uint32_t state) const;

 private:
  std::array<std::array<uint32_t, 256>, 4> tables_;
};

// The same move as a multiplier for carry-less multiplication: the raw state of
// x^(8 * bytes - 33) mod the polynomial (bytes >= 5). PCLMULQDQ of a state by it,
// reduced by the `crc32` instruction (which multiplies its 64-bit input by x^32),
// moves the state `bytes` on: one multiply instead of four table lookups. (Both
// operands are bit-reflected, so their product carries one more factor of x.)
uint32_t ShiftMultiplier(size_t bytes);

// The block sizes the kernels interleave three streams over, and their shifts.
inline constexpr size_t kLongBlock = 8192;
inline constexpr size_t kShortBlock = 256;
const Crc32cShift& LongShift();
const Crc32cShift& ShortShift();

}  // namespace sealbox::crypto::crc32c_internal

#endif  // SEALBOX_CRYPTO_CRC32C_CRC32C_SHIFT_H_
