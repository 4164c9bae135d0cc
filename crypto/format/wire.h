// Byte-level helpers shared by the wire formats: big-endian integers and the one
// error every malformed or unauthentic ciphertext gets.
#ifndef SEALBOX_CRYPTO_FORMAT_WIRE_H_
#define SEALBOX_CRYPTO_FORMAT_WIRE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace sealbox::crypto {

// The same status as ExpandedKey::Open's (IsDecryptionFailure() is true for it), so a
// caller cannot tell a bad header from a bad tag.
inline absl::Status DecryptionFailed() {
  return absl::InvalidArgumentError("decryption failed");
}

inline void StoreU32BE(uint32_t value, uint8_t* out) {
  for (int i = 3; i >= 0; --i, value >>= 8) out[i] = static_cast<uint8_t>(value);
}

inline void StoreU64BE(uint64_t value, uint8_t* out) {
  for (int i = 7; i >= 0; --i, value >>= 8) out[i] = static_cast<uint8_t>(value);
}

inline uint32_t LoadU32BE(const uint8_t* in) {
  return (uint32_t{in[0]} << 24) | (uint32_t{in[1]} << 16) | (uint32_t{in[2]} << 8) |
         uint32_t{in[3]};
}

inline void AppendU64BE(uint64_t value, std::vector<uint8_t>& out) {
  uint8_t bytes[8];
  StoreU64BE(value, bytes);
  out.insert(out.end(), bytes, bytes + 8);
}

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_WIRE_H_
