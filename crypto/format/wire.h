// A byte-level helper the wire formats share; big-endian loads and stores are in
// crypto/byte_order, the uniform failure in crypto/decryption_failure.h.
#ifndef SEALBOX_CRYPTO_FORMAT_WIRE_H_
#define SEALBOX_CRYPTO_FORMAT_WIRE_H_

#include <cstdint>
#include <vector>

#include "crypto/byte_order/byte_order.h"

namespace sealbox::crypto {

// Appends `value` as 8 big-endian bytes (a length prefix).
inline void AppendBigEndian64(uint64_t value, std::vector<uint8_t>& out) {
  uint8_t bytes[8];
  StoreBigEndian64(value, bytes);
  out.insert(out.end(), bytes, bytes + 8);
}

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_WIRE_H_
