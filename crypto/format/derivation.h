// How the wire formats derive their AES-GCM keys from a key version's material:
// HKDF-SHA256 with an `info` that binds the purpose, the tenant and the key name, so
// one version's material never encrypts anything directly, and a ciphertext made for
// one tenant or key name cannot be opened as another's.
#ifndef SEALBOX_CRYPTO_FORMAT_DERIVATION_H_
#define SEALBOX_CRYPTO_FORMAT_DERIVATION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/secret/secret_bytes.h"

namespace sealbox::crypto {

// "sealbox/v1/unary" || u8 len(tenant) || tenant || u8 len(key name) || key name.
// INVALID_ARGUMENT if a name is longer than 255 bytes.
absl::StatusOr<std::vector<uint8_t>> UnaryInfo(absl::string_view tenant,
                                               absl::string_view key_name);

// "sealbox/v1/stream" || u8 len(tenant) || tenant || u8 len(key name) || key name ||
// u64 BE len(aad) || aad.
absl::StatusOr<std::vector<uint8_t>> StreamInfo(absl::string_view tenant,
                                                absl::string_view key_name,
                                                absl::Span<const uint8_t> aad);

// HKDF-SHA256(ikm = material, salt, info) to as many bytes as `material`, which must
// be 16 or 32 bytes (AES-128 or AES-256): the subkey is the same strength as the key.
absl::StatusOr<SecretBytes> DeriveSubkey(absl::Span<const uint8_t> material,
                                         absl::Span<const uint8_t> salt,
                                         absl::Span<const uint8_t> info);

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_DERIVATION_H_
