#include "crypto/crc32c/crc32c_shift.h"

#include <algorithm>
#include <vector>

#include "crypto/crc32c/crc32c_kernels.h"

namespace sealbox::crypto::crc32c_internal {
namespace {

// The raw state (without the CRC's pre- and post-inversion) after `bytes` zero
// bytes, by the portable kernel: only for building tables, once.
uint32_t ZeroBytes(uint32_t state, size_t bytes) {
  static const std::vector<uint8_t> zeros(kLongBlock, 0);
  uint32_t crc = ~state;
  for (; bytes > 0; bytes -= std::min(bytes, zeros.size())) {
    crc = ExtendPortable(crc, zeros.data(), std::min(bytes, zeros.size()));
  }
  return ~crc;
}

}  // namespace

Crc32cShift::Crc32cShift(size_t bytes) {
  // The shift is linear: the image of each of the 32 bits, then every byte value
  // as the XOR of its bits' images.
  std::array<uint32_t, 32> bit_images;
  for (int bit = 0; bit < 32; ++bit) bit_images[bit] = ZeroBytes(uint32_t{1} << bit, bytes);
  for (int k = 0; k < 4; ++k) {
    for (uint32_t v = 0; v < 256; ++v) {
      uint32_t image = 0;
      for (int bit = 0; bit < 8; ++bit) {
        if (v & (1u << bit)) image ^= bit_images[8 * k + bit];
      }
      tables_[k][v] = image;
    }
  }
}

uint32_t Crc32cShift::operator()(uint32_t state) const {
  return tables_[0][state & 0xff] ^ tables_[1][(state >> 8) & 0xff] ^
         tables_[2][(state >> 16) & 0xff] ^ tables_[3][state >> 24];
}

uint32_t ShiftMultiplier(size_t bytes) {
  // x^7 is bit 24 of a raw state (bit i holds x^(31 - i)); 5 bytes less of shift
  // makes x^(7 + 8 * (bytes - 5)) = x^(8 * bytes - 33).
  return ZeroBytes(uint32_t{1} << 24, bytes - 5);
}

const Crc32cShift& LongShift() {
  static const auto* shift = new Crc32cShift(kLongBlock);
  return *shift;
}

const Crc32cShift& ShortShift() {
  static const auto* shift = new Crc32cShift(kShortBlock);
  return *shift;
}

}  // namespace sealbox::crypto::crc32c_internal
