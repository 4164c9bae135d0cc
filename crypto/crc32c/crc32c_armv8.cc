#include <arm_acle.h>

#include <cstring>

#include "crypto/crc32c/crc32c_kernels.h"
#include "crypto/crc32c/crc32c_shift.h"

namespace sealbox::crypto::crc32c_internal {
namespace {

// `crc32cx` is pipelined like x86's `crc32` (latency 2-3, one per cycle): three
// independent streams over three blocks, joined afterwards (crc32c_shift.h).
__attribute__((target("+crc"))) inline uint32_t ThreeBlocks(uint32_t crc, const uint8_t* data,
                                                            size_t block,
                                                            const Crc32cShift& shift) {
  uint32_t c0 = crc, c1 = 0, c2 = 0;
  for (size_t i = 0; i < block; i += 8) {
    uint64_t w0, w1, w2;
    std::memcpy(&w0, data + i, 8);
    std::memcpy(&w1, data + block + i, 8);
    std::memcpy(&w2, data + 2 * block + i, 8);
    c0 = __crc32cd(c0, w0);
    c1 = __crc32cd(c1, w1);
    c2 = __crc32cd(c2, w2);
  }
  return shift(shift(c0) ^ c1) ^ c2;
}

}  // namespace

__attribute__((target("+crc"))) uint32_t ExtendArmv8Crc32(uint32_t crc, const uint8_t* data,
                                                          size_t size) {
  uint32_t c = ~crc;
  for (; size >= 3 * kLongBlock; data += 3 * kLongBlock, size -= 3 * kLongBlock) {
    c = ThreeBlocks(c, data, kLongBlock, LongShift());
  }
  for (; size >= 3 * kShortBlock; data += 3 * kShortBlock, size -= 3 * kShortBlock) {
    c = ThreeBlocks(c, data, kShortBlock, ShortShift());
  }
  for (; size >= 8; data += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, data, 8);
    c = __crc32cd(c, word);
  }
  for (; size > 0; ++data, --size) c = __crc32cb(c, *data);
  return ~c;
}

}  // namespace sealbox::crypto::crc32c_internal
