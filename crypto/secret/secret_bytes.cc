#include "crypto/secret/secret_bytes.h"

#include <utility>

#include "crypto/secret/secure_wipe.h"

namespace sealbox::crypto {

SecretBytes& SecretBytes::operator=(SecretBytes&& other) noexcept {
  if (this != &other) {
    // The old key must not linger in the freed allocation.
    SecureWipe(bytes_.data(), bytes_.size());
    bytes_ = std::move(other.bytes_);
    other.bytes_.clear();
  }
  return *this;
}

SecretBytes::~SecretBytes() { SecureWipe(bytes_.data(), bytes_.size()); }

}  // namespace sealbox::crypto
