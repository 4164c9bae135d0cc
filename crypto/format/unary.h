// sealbox unary ciphertext, version 1 (docs/FORMAT.md has every byte):
//
//   0x01 | key version (u32 BE) | epoch id (16) | nonce (12) | ciphertext | tag (16)
//
// The AES-GCM key is an epoch subkey: HKDF-SHA256(ikm = the key version's material,
// salt = epoch id, info = "sealbox/v1/unary" || u8 len(tenant) || tenant ||
// u8 len(key name) || key name), 32 bytes for AES-256 keys, 16 for AES-128.
// GCM AAD = the 33 header bytes || u64 BE len(caller AAD) || caller AAD.
#ifndef SEALBOX_CRYPTO_FORMAT_UNARY_H_
#define SEALBOX_CRYPTO_FORMAT_UNARY_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/aes_gcm.h"
#include "crypto/format/output_bytes.h"
#include "crypto/secret/secret_bytes.h"

namespace sealbox::crypto {

inline constexpr uint8_t kUnaryFormatV1 = 0x01;
inline constexpr size_t kEpochIdBytes = 16;
inline constexpr size_t kUnaryNonceBytes = 12;
inline constexpr size_t kUnaryHeaderBytes = 1 + 4 + kEpochIdBytes + kUnaryNonceBytes;
inline constexpr size_t kUnaryOverheadBytes = kUnaryHeaderBytes + 16;

// Messages one epoch may seal: the nonce counter never exceeds 32 bits, and an epoch
// asks to be replaced at half of that.
inline constexpr uint64_t kMaxMessagesPerEpoch = uint64_t{1} << 32;
inline constexpr uint64_t kNearlyExhaustedMessages = uint64_t{1} << 31;

using EpochId = std::array<uint8_t, kEpochIdBytes>;

// Who a key version belongs to; bound into every derivation.
struct KeyContext {
  std::string tenant;
  std::string key_name;
  uint32_t version = 0;
};

// The parsed fixed header of a unary ciphertext.
struct UnaryHeader {
  uint32_t key_version = 0;
  EpochId epoch_id{};
};

// The plaintext size of a unary ciphertext (0 if it is too short to be one).
inline size_t OpenedBytes(absl::Span<const uint8_t> ciphertext) {
  return ciphertext.size() < kUnaryOverheadBytes ? 0 : ciphertext.size() - kUnaryOverheadBytes;
}

// Reads the header; INVALID_ARGUMENT "decryption failed" for anything that is not a
// well-formed v1 ciphertext (too short, unknown format byte), so a caller learns
// nothing beyond what Open would say.
absl::StatusOr<UnaryHeader> ParseUnaryHeader(absl::Span<const uint8_t> ciphertext);

// One epoch of one key version: the derived subkey, expanded once, and a message
// counter used as the nonce. Thread safe; Seal never expands a key or takes a lock.
class EpochSubkey {
 public:
  // Derives the subkey for `epoch_id` from `material` (16 or 32 bytes).
  static absl::StatusOr<std::unique_ptr<EpochSubkey>> Derive(absl::Span<const uint8_t> material,
                                                             const KeyContext& context,
                                                             const EpochId& epoch_id);

  // Derives with a fresh random epoch id, for sealing.
  static absl::StatusOr<std::unique_ptr<EpochSubkey>> DeriveNewEpoch(
      absl::Span<const uint8_t> material, const KeyContext& context);

  // Derive() with the counter starting at `next_counter` instead of 0: only for
  // tests and the worked examples in docs/FORMAT.md. Reusing an epoch id with a
  // counter that was already used repeats a nonce, which breaks GCM completely.
  static absl::StatusOr<std::unique_ptr<EpochSubkey>> DeriveForTesting(
      absl::Span<const uint8_t> material, const KeyContext& context, const EpochId& epoch_id,
      uint64_t next_counter);

  // Seals under this epoch; the nonce is 4 zero bytes || u64 BE message counter.
  // RESOURCE_EXHAUSTED once 2^32 messages have been sealed (the caller then derives
  // a new epoch); never reuses a nonce. `Output` is std::vector<uint8_t>,
  // std::string (which a protobuf field takes without a copy) or OutputBytes (which
  // is not zero-filled before the cipher writes it).
  template <typename Output = std::vector<uint8_t>>
  absl::StatusOr<Output> Seal(absl::Span<const uint8_t> plaintext, absl::Span<const uint8_t> aad);

  // Opens a ciphertext whose header names this epoch and version; any other, and
  // any failure of authentication: INVALID_ARGUMENT "decryption failed".
  absl::StatusOr<std::vector<uint8_t>> Open(absl::Span<const uint8_t> ciphertext,
                                            absl::Span<const uint8_t> aad) const;
  // Open into the caller's `plaintext`, of exactly OpenedBytes(ciphertext) bytes;
  // wiped on failure. No copy of the plaintext is left anywhere else.
  absl::Status OpenInto(absl::Span<const uint8_t> ciphertext, absl::Span<const uint8_t> aad,
                        absl::Span<uint8_t> plaintext) const;

  // True when this epoch should be replaced (past 2^31 messages: well before the limit).
  bool NearlyExhausted() const;

  const EpochId& epoch_id() const { return epoch_id_; }
  uint32_t version() const { return version_; }

 private:
  EpochSubkey(std::unique_ptr<ExpandedKey> key, uint32_t version, const EpochId& id)
      : key_(std::move(key)), version_(version), epoch_id_(id) {}

  std::unique_ptr<ExpandedKey> key_;
  uint32_t version_;
  EpochId epoch_id_;
  std::atomic<uint64_t> next_counter_{0};
};

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_UNARY_H_
