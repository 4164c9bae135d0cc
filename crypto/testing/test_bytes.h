#ifndef SEALBOX_CRYPTO_TESTING_TEST_BYTES_H_
#define SEALBOX_CRYPTO_TESTING_TEST_BYTES_H_

// For tests: random inputs, hex for messages, and the AES key sizes to run over.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace sealbox::crypto::test {

inline constexpr size_t kAesKeySizes[] = {16, 24, 32};

// Eight bytes per draw: a draw per byte took about half of the long messages' time.
inline std::vector<uint8_t> RandomBytes(std::mt19937_64& rng, size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; i += 8) {
    const uint64_t word = rng();
    std::memcpy(bytes.data() + i, &word, std::min<size_t>(8, size - i));
  }
  return bytes;
}

inline std::string Hex(absl::Span<const uint8_t> bytes) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace sealbox::crypto::test

#endif  // SEALBOX_CRYPTO_TESTING_TEST_BYTES_H_
