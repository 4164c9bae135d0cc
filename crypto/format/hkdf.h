#ifndef SEALBOX_CRYPTO_FORMAT_HKDF_H_
#define SEALBOX_CRYPTO_FORMAT_HKDF_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "crypto/secret/secret_bytes.h"

namespace sealbox::crypto {

// HKDF-SHA256 (RFC 5869): extract with `salt`, expand with `info` to `length` bytes
// (at most 255 * 32).
absl::StatusOr<SecretBytes> HkdfSha256(absl::Span<const uint8_t> ikm,
                                       absl::Span<const uint8_t> salt,
                                       absl::Span<const uint8_t> info, size_t length);

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_HKDF_H_
