// Reads a fuzz input front to back: fixed-size fields first, the rest last. Reading
// past the end yields zeros and empty spans, so every input decodes to something.
#ifndef SEALBOX_TESTS_FUZZ_FUZZ_INPUT_H_
#define SEALBOX_TESTS_FUZZ_FUZZ_INPUT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace sealbox::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : rest_(data, size) {}

  uint8_t Byte() {
    if (rest_.empty()) return 0;
    const uint8_t byte = rest_[0];
    rest_.remove_prefix(1);
    return byte;
  }

  uint16_t U16() { return static_cast<uint16_t>(Byte() << 8 | Byte()); }

  // The next `size` bytes, or fewer at the end of the input.
  absl::Span<const uint8_t> Bytes(size_t size) {
    const absl::Span<const uint8_t> taken = rest_.first(std::min(size, rest_.size()));
    rest_.remove_prefix(taken.size());
    return taken;
  }

  // Everything not read yet.
  absl::Span<const uint8_t> Rest() { return Bytes(rest_.size()); }

  bool empty() const { return rest_.empty(); }

 private:
  absl::Span<const uint8_t> rest_;
};

}  // namespace sealbox::fuzz

#endif  // SEALBOX_TESTS_FUZZ_FUZZ_INPUT_H_
