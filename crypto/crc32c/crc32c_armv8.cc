#include <arm_acle.h>

#include <cstring>

#include "crypto/crc32c/crc32c_kernels.h"

namespace sealbox::crypto::crc32c_internal {

__attribute__((target("+crc"))) uint32_t ExtendArmv8Crc32(uint32_t crc,
                                                          const uint8_t* data,
                                                          size_t size) {
  uint32_t c = ~crc;
  for (; size >= 8; data += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, data, 8);
    c = __crc32cd(c, word);
  }
  for (; size > 0; ++data, --size) c = __crc32cb(c, *data);
  return ~c;
}

}  // namespace sealbox::crypto::crc32c_internal
