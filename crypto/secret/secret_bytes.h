#ifndef SEALBOX_CRYPTO_SECRET_SECRET_BYTES_H_
#define SEALBOX_CRYPTO_SECRET_SECRET_BYTES_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "crypto/secret/locked_memory.h"

namespace sealbox::crypto {

// Bytes of key material: movable, not copyable by accident, wiped on destruction.
// They live in secret memory (crypto/secret/locked_memory.h): locked in RAM where the
// OS allows, and never in a core dump.
class SecretBytes {
 public:
  SecretBytes() = default;
  explicit SecretBytes(size_t size) : bytes_(size) {}
  explicit SecretBytes(absl::Span<const uint8_t> data) : bytes_(data.begin(), data.end()) {}
  SecretBytes(SecretBytes&& other) noexcept = default;
  SecretBytes& operator=(SecretBytes&& other) noexcept;
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;
  ~SecretBytes();

  // An explicit copy, for the rare place that needs one.
  SecretBytes Clone() const { return SecretBytes(span()); }

  uint8_t* data() { return bytes_.data(); }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  absl::Span<const uint8_t> span() const { return bytes_; }
  absl::Span<uint8_t> mutable_span() { return absl::MakeSpan(bytes_); }

 private:
  std::vector<uint8_t, SecretAllocator<uint8_t>> bytes_;
};

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_SECRET_SECRET_BYTES_H_
