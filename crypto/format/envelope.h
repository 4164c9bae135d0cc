// The sealbox envelope file, version 1 (docs/FORMAT.md "Envelope file"): data sealed
// by the client itself under a fresh data key from GenerateDataKey, which travels
// sealed in the header.
//
//   header:  0x03 | segment size S (u32 BE) | nonce prefix (7) | L (u16 BE) | sealed data key (L)
//   then:    the STREAM segments (segments.h) under the data key itself, with
//            header bytes 0..11 as every segment's AAD
//
// The sealed data key is not in the segments' AAD: another one opens to another data
// key, which no segment verifies under; and Rewrap can replace it alone.
#ifndef SEALBOX_CRYPTO_FORMAT_ENVELOPE_H_
#define SEALBOX_CRYPTO_FORMAT_ENVELOPE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "crypto/format/segments.h"

namespace sealbox::crypto {

inline constexpr uint8_t kEnvelopeFormatV1 = 0x03;
// Format, segment size, nonce prefix, L: what comes before the sealed data key.
inline constexpr size_t kEnvelopeFixedHeaderBytes = 1 + 4 + kSegmentNoncePrefixBytes + 2;
inline constexpr uint32_t kDefaultEnvelopeSegmentBytes = 1 << 20;
// A sealed data key is a unary ciphertext: 49 bytes at least (33 of header, 16 of tag).
inline constexpr size_t kMinSealedDataKeyBytes = 49;
inline constexpr size_t kMaxSealedDataKeyBytes = 1024;

// The parsed header of an envelope file.
struct EnvelopeHeader {
  uint32_t segment_bytes = 0;
  SegmentNoncePrefix nonce_prefix{};
  std::vector<uint8_t> sealed_data_key;
  std::vector<uint8_t> bytes;  // the whole header as it was read
};

// The header's length from its first kEnvelopeFixedHeaderBytes bytes (so a reader
// knows how much more to read), or INVALID_ARGUMENT if they are not an envelope's.
absl::StatusOr<size_t> EnvelopeHeaderBytes(absl::Span<const uint8_t> fixed);

// Parses a whole header (exactly EnvelopeHeaderBytes() long).
absl::StatusOr<EnvelopeHeader> ParseEnvelopeHeader(absl::Span<const uint8_t> header);

// The header for `sealed_data_key` with a fresh random nonce prefix, or the given
// one (tests and docs/FORMAT.md's worked example only).
absl::StatusOr<EnvelopeHeader> NewEnvelopeHeader(
    absl::Span<const uint8_t> sealed_data_key, uint32_t segment_bytes,
    std::optional<SegmentNoncePrefix> nonce_prefix = std::nullopt);

// The segment sealer and opener for `header` under `data_key` (16 or 32 bytes).
absl::StatusOr<std::unique_ptr<SegmentSealer>> EnvelopeSealer(absl::Span<const uint8_t> data_key,
                                                              const EnvelopeHeader& header);
absl::StatusOr<std::unique_ptr<SegmentOpener>> EnvelopeOpener(absl::Span<const uint8_t> data_key,
                                                              const EnvelopeHeader& header);

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_ENVELOPE_H_
