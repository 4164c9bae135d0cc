#include "crypto/format/envelope.h"

#include <openssl/rand.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "crypto/aes_gcm.h"
#include "crypto/byte_order/byte_order.h"

namespace sealbox::crypto {
namespace {

// Header offsets: 0x03 | segment size (4) | nonce prefix (7) | L (2) | sealed data key.
constexpr size_t kSegmentSizeOffset = 1;
constexpr size_t kPrefixOffset = kSegmentSizeOffset + 4;
constexpr size_t kKeyLengthOffset = kPrefixOffset + kSegmentNoncePrefixBytes;
// The segments' AAD: format, segment size and nonce prefix.
constexpr size_t kAadBytes = kKeyLengthOffset;

absl::Status NotAnEnvelope(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("not a sealbox envelope file: ", why));
}

absl::StatusOr<std::unique_ptr<ExpandedKey>> DataKey(absl::Span<const uint8_t> data_key) {
  if (data_key.size() != 16 && data_key.size() != 32) {
    return absl::InvalidArgumentError("a data key is 16 or 32 bytes");
  }
  return ExpandedKey::Create(data_key);
}

}  // namespace

absl::StatusOr<size_t> EnvelopeHeaderBytes(absl::Span<const uint8_t> fixed) {
  if (fixed.size() < kEnvelopeFixedHeaderBytes) return NotAnEnvelope("too short");
  if (fixed[0] != kEnvelopeFormatV1) return NotAnEnvelope("first byte is not 0x03");
  // Checked before anything is buffered: both decide how much a reader holds.
  if (!ValidSegmentSize(LoadBigEndian32(&fixed[kSegmentSizeOffset]))) {
    return NotAnEnvelope("segment size is not a power of two from 4 KiB to 4 MiB");
  }
  const size_t key_bytes = (size_t{fixed[kKeyLengthOffset]} << 8) | fixed[kKeyLengthOffset + 1];
  if (key_bytes < kMinSealedDataKeyBytes || key_bytes > kMaxSealedDataKeyBytes) {
    return NotAnEnvelope("sealed data key length out of range");
  }
  return kEnvelopeFixedHeaderBytes + key_bytes;
}

absl::StatusOr<EnvelopeHeader> ParseEnvelopeHeader(absl::Span<const uint8_t> header) {
  absl::StatusOr<size_t> size = EnvelopeHeaderBytes(header);
  if (!size.ok()) return size.status();
  if (header.size() != *size) return NotAnEnvelope("header length does not match");
  EnvelopeHeader parsed;
  parsed.segment_bytes = LoadBigEndian32(&header[kSegmentSizeOffset]);
  std::copy_n(&header[kPrefixOffset], kSegmentNoncePrefixBytes, parsed.nonce_prefix.begin());
  parsed.sealed_data_key.assign(header.begin() + kEnvelopeFixedHeaderBytes, header.end());
  parsed.bytes.assign(header.begin(), header.end());
  return parsed;
}

absl::StatusOr<EnvelopeHeader> NewEnvelopeHeader(absl::Span<const uint8_t> sealed_data_key,
                                                 uint32_t segment_bytes,
                                                 std::optional<SegmentNoncePrefix> nonce_prefix) {
  if (segment_bytes == 0) segment_bytes = kDefaultEnvelopeSegmentBytes;
  if (!ValidSegmentSize(segment_bytes)) {
    return absl::InvalidArgumentError("segment size must be a power of two from 4 KiB to 4 MiB");
  }
  if (sealed_data_key.size() < kMinSealedDataKeyBytes ||
      sealed_data_key.size() > kMaxSealedDataKeyBytes) {
    return absl::InvalidArgumentError("a sealed data key is 49 to 1024 bytes");
  }
  SegmentNoncePrefix prefix;
  if (nonce_prefix.has_value()) {
    prefix = *nonce_prefix;
  } else if (RAND_bytes(prefix.data(), prefix.size()) != 1) {
    return absl::InternalError("RAND_bytes failed");
  }
  std::vector<uint8_t> bytes(kEnvelopeFixedHeaderBytes);
  bytes[0] = kEnvelopeFormatV1;
  StoreBigEndian32(segment_bytes, &bytes[kSegmentSizeOffset]);
  std::copy(prefix.begin(), prefix.end(), &bytes[kPrefixOffset]);
  bytes[kKeyLengthOffset] = static_cast<uint8_t>(sealed_data_key.size() >> 8);
  bytes[kKeyLengthOffset + 1] = static_cast<uint8_t>(sealed_data_key.size());
  bytes.insert(bytes.end(), sealed_data_key.begin(), sealed_data_key.end());
  return ParseEnvelopeHeader(bytes);
}

absl::StatusOr<std::unique_ptr<SegmentSealer>> EnvelopeSealer(absl::Span<const uint8_t> data_key,
                                                              const EnvelopeHeader& header) {
  absl::StatusOr<std::unique_ptr<ExpandedKey>> key = DataKey(data_key);
  if (!key.ok()) return key.status();
  return std::make_unique<SegmentSealer>(*std::move(key), header.nonce_prefix,
                                         absl::MakeSpan(header.bytes).first(kAadBytes),
                                         header.segment_bytes);
}

absl::StatusOr<std::unique_ptr<SegmentOpener>> EnvelopeOpener(absl::Span<const uint8_t> data_key,
                                                              const EnvelopeHeader& header) {
  absl::StatusOr<std::unique_ptr<ExpandedKey>> key = DataKey(data_key);
  if (!key.ok()) return key.status();
  return std::make_unique<SegmentOpener>(*std::move(key), header.nonce_prefix,
                                         absl::MakeSpan(header.bytes).first(kAadBytes),
                                         header.segment_bytes);
}

}  // namespace sealbox::crypto
