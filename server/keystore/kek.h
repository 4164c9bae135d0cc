// The key-encryption key (KEK) and what every keystore backend does with it. Each
// write is wrapped under a key of its own, derived from the KEK and a random salt,
// so nonces never pile up under one key however often the store is written; and each
// write carries the KEK's fingerprint, which tells a wrong KEK apart from damage.
#ifndef SEALBOX_SERVER_KEYSTORE_KEK_H_
#define SEALBOX_SERVER_KEYSTORE_KEK_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

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

// A key-encryption key: 32 bytes in secret memory, wiped when dropped. FromBytes is
// the one place the length is checked, so whoever holds a Kek holds a usable one.
class Kek {
 public:
  // INVALID_ARGUMENT "the KEK must be 32 bytes, raw or as 64 hex digits" for any
  // other length.
  static absl::StatusOr<Kek> FromBytes(absl::Span<const uint8_t> bytes);

  Kek(Kek&&) noexcept = default;
  Kek& operator=(Kek&&) noexcept = default;

  // An explicit copy, for the rare place that needs one.
  Kek Clone() const { return Kek(bytes_.Clone()); }

  absl::Span<const uint8_t> span() const { return bytes_.span(); }

 private:
  explicit Kek(crypto::SecretBytes bytes) : bytes_(std::move(bytes)) {}

  crypto::SecretBytes bytes_;
};

// A copy of an optional KEK (configs and storage options hold theirs by value).
inline std::optional<Kek> CloneKek(const std::optional<Kek>& kek) {
  if (!kek.has_value()) return std::nullopt;
  return kek->Clone();
}

// HMAC-SHA256(KEK, "sealbox/v1/kek-fingerprint")[0:16]. Safe to store in the clear.
KekFingerprint FingerprintOf(const Kek& kek);

// Whether `fingerprint` (16 bytes) is `kek`'s. Constant time.
bool FingerprintMatches(const Kek& kek, const uint8_t* fingerprint);

// The AES-256-GCM key for one write: HKDF-SHA256(ikm = KEK, salt, info). `info`
// names the format ("sealbox/v1/keystore", "sealbox/v1/etcd-record").
absl::StatusOr<std::unique_ptr<crypto::ExpandedKey>> WrappingKey(const Kek& kek,
                                                                 absl::Span<const uint8_t> salt,
                                                                 absl::string_view info);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_KEK_H_
