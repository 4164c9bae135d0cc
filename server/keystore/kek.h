// The key-encryption key (KEK) and what every keystore backend does with it. Each
// write is wrapped under a key of its own, derived from the KEK and a random salt,
// so nonces never pile up under one key however often the store is written; and each
// write carries the KEK's fingerprint, which tells a wrong KEK apart from damage.
#ifndef SEALBOX_SERVER_KEYSTORE_KEK_H_
#define SEALBOX_SERVER_KEYSTORE_KEK_H_

#include <array>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/aes_gcm.h"
#include "crypto/secret/secret_bytes.h"

namespace sealbox::server {

inline constexpr size_t kKekBytes = 32;
inline constexpr size_t kKekFingerprintBytes = 16;
inline constexpr size_t kKekSaltBytes = 16;

using KekFingerprint = std::array<uint8_t, kKekFingerprintBytes>;

// INVALID_ARGUMENT "<what> must be 32 bytes, not N" unless `kek` is 32 bytes.
absl::Status CheckKek(const crypto::SecretBytes& kek, absl::string_view what = "the KEK");

// CheckKek of a KEK and of the previous one, which may be empty.
absl::Status CheckKeks(const crypto::SecretBytes& kek, const crypto::SecretBytes& previous);

// HMAC-SHA256(KEK, "sealbox/v1/kek-fingerprint")[0:16]. Safe to store in the clear.
KekFingerprint FingerprintOf(const crypto::SecretBytes& kek);

// Whether `fingerprint` (16 bytes) is `kek`'s. Constant time.
bool FingerprintMatches(const crypto::SecretBytes& kek, const uint8_t* fingerprint);

// The AES-256-GCM key for one write: HKDF-SHA256(ikm = KEK, salt, info). `info`
// names the format ("sealbox/v1/keystore", "sealbox/v1/etcd-record").
absl::StatusOr<std::unique_ptr<crypto::ExpandedKey>> WrappingKey(
    const crypto::SecretBytes& kek, absl::Span<const uint8_t> salt,
    absl::string_view info);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_KEK_H_
