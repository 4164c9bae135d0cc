// Byte helpers for the format tests.
#ifndef SEALBOX_CRYPTO_FORMAT_TEST_BYTES_H_
#define SEALBOX_CRYPTO_FORMAT_TEST_BYTES_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace sealbox::crypto::test {

using Bytes = std::vector<uint8_t>;

inline Bytes FromString(absl::string_view s) { return Bytes(s.begin(), s.end()); }

inline Bytes FromHex(absl::string_view hex) { return FromString(absl::HexStringToBytes(hex)); }

inline std::string Hex(absl::Span<const uint8_t> bytes) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// first, first + 1, ..., wrapping at 256.
inline Bytes Sequence(size_t size, uint8_t first = 0) {
  Bytes bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(first + i);
  return bytes;
}

inline Bytes RandomBytes(std::mt19937_64& rng, size_t size) {
  Bytes bytes(size);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

}  // namespace sealbox::crypto::test

#endif  // SEALBOX_CRYPTO_FORMAT_TEST_BYTES_H_
