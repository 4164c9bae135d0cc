#include "crypto/format/unary.h"

#include <openssl/rand.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "crypto/byte_order/byte_order.h"
#include "crypto/decryption_failure.h"
#include "crypto/format/derivation.h"
#include "crypto/format/output_bytes.h"
#include "crypto/format/wire.h"

namespace sealbox::crypto {
namespace {

// Offsets in the header: 0x01 | version (4) | epoch id (16) | nonce (12).
constexpr size_t kVersionOffset = 1;
constexpr size_t kEpochIdOffset = kVersionOffset + 4;
constexpr size_t kNonceOffset = kEpochIdOffset + kEpochIdBytes;
constexpr size_t kTagBytes = 16;

// The header is authenticated as it stands, and the caller's AAD is length-prefixed
// so no other split of header and AAD gives the same GCM input.
std::vector<uint8_t> GcmAad(absl::Span<const uint8_t> header, absl::Span<const uint8_t> aad) {
  std::vector<uint8_t> gcm_aad(header.begin(), header.end());
  gcm_aad.reserve(header.size() + 8 + aad.size());
  AppendBigEndian64(aad.size(), gcm_aad);
  gcm_aad.insert(gcm_aad.end(), aad.begin(), aad.end());
  return gcm_aad;
}

}  // namespace

absl::StatusOr<UnaryHeader> ParseUnaryHeader(absl::Span<const uint8_t> ciphertext) {
  if (ciphertext.size() < kUnaryOverheadBytes || ciphertext[0] != kUnaryFormatV1) {
    return DecryptionFailedError();
  }
  UnaryHeader header;
  header.key_version = LoadBigEndian32(&ciphertext[kVersionOffset]);
  std::copy_n(&ciphertext[kEpochIdOffset], kEpochIdBytes, header.epoch_id.begin());
  return header;
}

absl::StatusOr<std::unique_ptr<EpochSubkey>> EpochSubkey::Derive(absl::Span<const uint8_t> material,
                                                                 const KeyContext& context,
                                                                 const EpochId& epoch_id) {
  absl::StatusOr<std::vector<uint8_t>> info = UnaryInfo(context.tenant, context.key_name);
  if (!info.ok()) return info.status();
  absl::StatusOr<SecretBytes> subkey = DeriveSubkey(material, epoch_id, *info);
  if (!subkey.ok()) return subkey.status();
  absl::StatusOr<std::unique_ptr<ExpandedKey>> key = ExpandedKey::Create(subkey->span());
  if (!key.ok()) return key.status();
  return std::unique_ptr<EpochSubkey>(new EpochSubkey(*std::move(key), context.version, epoch_id));
}

absl::StatusOr<std::unique_ptr<EpochSubkey>> EpochSubkey::DeriveNewEpoch(
    absl::Span<const uint8_t> material, const KeyContext& context) {
  EpochId epoch_id;
  if (RAND_bytes(epoch_id.data(), epoch_id.size()) != 1) {
    return absl::InternalError("RAND_bytes failed");
  }
  return Derive(material, context, epoch_id);
}

absl::StatusOr<std::unique_ptr<EpochSubkey>> EpochSubkey::DeriveForTesting(
    absl::Span<const uint8_t> material, const KeyContext& context, const EpochId& epoch_id,
    uint64_t next_counter) {
  absl::StatusOr<std::unique_ptr<EpochSubkey>> subkey = Derive(material, context, epoch_id);
  if (subkey.ok()) (*subkey)->next_counter_.store(next_counter);
  return subkey;
}

template <typename Output>
absl::StatusOr<Output> EpochSubkey::Seal(absl::Span<const uint8_t> plaintext,
                                         absl::Span<const uint8_t> aad) {
  // Each call takes its own counter value, so concurrent Seals never share a nonce.
  // Values past the limit are burnt, never wrapped.
  const uint64_t counter = next_counter_.fetch_add(1, std::memory_order_relaxed);
  if (counter >= kMaxMessagesPerEpoch) {
    return absl::ResourceExhaustedError("epoch exhausted; derive a new epoch");
  }
  // Only the header is written here; the cipher writes the body and the tag (an
  // OutputBytes is not zero-filled first, a string or vector is).
  Output out;
  const absl::Span<uint8_t> all = Grow(out, kUnaryOverheadBytes + plaintext.size());
  std::fill_n(all.begin(), kUnaryHeaderBytes, 0);
  all[0] = kUnaryFormatV1;
  StoreBigEndian32(version_, &all[kVersionOffset]);
  std::copy(epoch_id_.begin(), epoch_id_.end(), &all[kEpochIdOffset]);
  StoreBigEndian64(counter, &all[kNonceOffset + 4]);  // the first 4 nonce bytes stay zero

  const absl::Status status = key_->Seal(
      all.subspan(kNonceOffset, kUnaryNonceBytes), GcmAad(all.first(kUnaryHeaderBytes), aad),
      plaintext, all.subspan(kUnaryHeaderBytes, plaintext.size()), all.last(kTagBytes));
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<std::vector<uint8_t>> EpochSubkey::Open(absl::Span<const uint8_t> ciphertext,
                                                       absl::Span<const uint8_t> aad) const {
  std::vector<uint8_t> plaintext(OpenedBytes(ciphertext));
  if (absl::Status s = OpenInto(ciphertext, aad, absl::MakeSpan(plaintext)); !s.ok()) {
    return s;
  }
  return plaintext;
}

absl::Status EpochSubkey::OpenInto(absl::Span<const uint8_t> ciphertext,
                                   absl::Span<const uint8_t> aad,
                                   absl::Span<uint8_t> plaintext) const {
  absl::StatusOr<UnaryHeader> header = ParseUnaryHeader(ciphertext);
  if (!header.ok()) return header.status();
  if (plaintext.size() != OpenedBytes(ciphertext)) {
    return absl::InternalError("OpenInto: the output must be the ciphertext's body size");
  }
  if (header->key_version != version_ || header->epoch_id != epoch_id_) {
    return DecryptionFailedError();
  }
  const absl::Status status = key_->Open(ciphertext.subspan(kNonceOffset, kUnaryNonceBytes),
                                         GcmAad(ciphertext.first(kUnaryHeaderBytes), aad),
                                         ciphertext.subspan(kUnaryHeaderBytes, plaintext.size()),
                                         ciphertext.last(kTagBytes), plaintext);
  // Open has already wiped `plaintext` on failure.
  if (!status.ok()) return DecryptionFailedError();
  return absl::OkStatus();
}

template absl::StatusOr<std::vector<uint8_t>> EpochSubkey::Seal(absl::Span<const uint8_t>,
                                                                absl::Span<const uint8_t>);
template absl::StatusOr<std::string> EpochSubkey::Seal(absl::Span<const uint8_t>,
                                                       absl::Span<const uint8_t>);
template absl::StatusOr<OutputBytes> EpochSubkey::Seal(absl::Span<const uint8_t>,
                                                       absl::Span<const uint8_t>);

bool EpochSubkey::NearlyExhausted() const {
  return next_counter_.load(std::memory_order_relaxed) >= kNearlyExhaustedMessages;
}

}  // namespace sealbox::crypto
