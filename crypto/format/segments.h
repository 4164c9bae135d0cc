// The segments of the STREAM construction (docs/FORMAT.md), shared by the stream
// ciphertext (0x02) and the envelope file (0x03), which differ only in their
// headers and in where the segment key comes from:
//
//   segment_i = AES-GCM(key, nonce = prefix (7) || i (u32 BE) || last (0x00/0x01),
//                       AAD = the format's header bytes, plaintext_i) || tag (16)
//
// Every segment but the last carries exactly `segment_bytes` of plaintext; the last
// carries fewer (possibly zero) and has the flag set, so truncation, reordering,
// splicing and trailing data all fail a tag. Memory is bounded by one segment.
#ifndef SEALBOX_CRYPTO_FORMAT_SEGMENTS_H_
#define SEALBOX_CRYPTO_FORMAT_SEGMENTS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "crypto/aes_gcm.h"
#include "crypto/format/output_bytes.h"
#include "crypto/secret/secret_bytes.h"

namespace sealbox::crypto {

inline constexpr size_t kSegmentNoncePrefixBytes = 7;
inline constexpr uint32_t kMinSegmentBytes = 4 * 1024;
inline constexpr uint32_t kMaxSegmentBytes = 4 * 1024 * 1024;
// Segment indices are 32 bits, so there are at most 2^32 segments.
inline constexpr uint64_t kMaxSegments = uint64_t{1} << 32;

using SegmentNoncePrefix = std::array<uint8_t, kSegmentNoncePrefixBytes>;

// A power of two from kMinSegmentBytes to kMaxSegmentBytes.
bool ValidSegmentSize(uint32_t bytes);

// Cuts plaintext fed in chunks of any size into sealed segments. `Output` is
// std::vector<uint8_t>, std::string or OutputBytes.
class SegmentSealer {
 public:
  // `segment_bytes` must be valid (ValidSegmentSize).
  SegmentSealer(std::unique_ptr<ExpandedKey> key, const SegmentNoncePrefix& prefix,
                absl::Span<const uint8_t> aad, uint32_t segment_bytes);

  // Appends every segment `chunk` completes. A full segment is never the last (the
  // last holds fewer bytes), so it is sealed at once.
  template <typename Output>
  absl::Status Update(absl::Span<const uint8_t> chunk, Output& out);

  // Appends the last segment. RESOURCE_EXHAUSTED from either call past 2^32
  // segments. Nothing is accepted after Finish or a failure.
  template <typename Output>
  absl::Status Finish(Output& out);

 private:
  template <typename Output>
  absl::Status Seal(absl::Span<const uint8_t> segment, bool last, Output& out);

  std::unique_ptr<ExpandedKey> key_;
  SegmentNoncePrefix prefix_;
  std::vector<uint8_t> aad_;
  SecretBytes plaintext_;  // the segment being filled: segment_bytes long
  size_t buffered_ = 0;
  uint64_t next_index_ = 0;
  bool finished_ = false;
};

// Verifies and decrypts segments fed in chunks of any size; plaintext is released
// only after its segment's tag verified. Errors are INVALID_ARGUMENT "decryption
// failed" and final: every later call returns the same one.
class SegmentOpener {
 public:
  SegmentOpener(std::unique_ptr<ExpandedKey> key, const SegmentNoncePrefix& prefix,
                absl::Span<const uint8_t> aad, uint32_t segment_bytes);

  // Appends verified plaintext to `out`, whose old buffer is wiped when it has to grow.
  template <typename Output>
  absl::Status Update(absl::Span<const uint8_t> chunk, Output& out);

  // At the end of the input: what is left must be the last segment. An error if it
  // is missing (truncation); anything fed afterwards is trailing data, an error.
  template <typename Output>
  absl::Status Finish(Output& out);

 private:
  template <typename Output>
  absl::Status Open(absl::Span<const uint8_t> segment, bool last, Output& out);
  template <typename Output>
  absl::Status Consume(absl::Span<const uint8_t> chunk, Output& out);

  std::unique_ptr<ExpandedKey> key_;
  SegmentNoncePrefix prefix_;
  std::vector<uint8_t> aad_;
  uint32_t segment_bytes_;
  std::vector<uint8_t> sealed_;  // the segment being gathered, up to size + tag
  uint64_t next_index_ = 0;
  absl::Status error_;  // sticky: the first failure, or "finished"
};

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_SEGMENTS_H_
