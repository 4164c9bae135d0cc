// OutputBytes: a byte buffer the formats append ciphertext or plaintext to, whose
// growth leaves the new bytes uninitialized.
//
// The formats make room for a segment's output and then let the cipher write every
// byte of it. std::string's and std::vector's resize zero that room first: one more
// pass over every output byte, for nothing (a large share of a stream's cost beside
// the cipher: docs/PERFORMANCE.md). C++17 has no resize_and_overwrite, so the
// buffer that must not pay for it is a vector whose allocator default-initializes:
// for uint8_t, that writes nothing.
#ifndef SEALBOX_CRYPTO_FORMAT_OUTPUT_BYTES_H_
#define SEALBOX_CRYPTO_FORMAT_OUTPUT_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace sealbox::crypto {

// std::allocator, except that a value constructed without arguments is left as
// operator new leaves it (resize's new elements); copies and inserts are unchanged.
template <typename T>
class DefaultInitAllocator : public std::allocator<T> {
 public:
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };

  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}

  template <typename U>
  void construct(U* at) noexcept {
    ::new (static_cast<void*>(at)) U;
  }
  template <typename U, typename... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};

using OutputBytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

// Lengthens `out` (OutputBytes, std::string or std::vector<uint8_t>) by `n` bytes and
// returns them, to be written in place.
template <typename Output>
absl::Span<uint8_t> Grow(Output& out, size_t n) {
  const size_t at = out.size();
  out.resize(at + n);
  return absl::MakeSpan(reinterpret_cast<uint8_t*>(out.data()) + at, n);
}

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_OUTPUT_BYTES_H_
