// sealbox stream ciphertext, version 1 (the STREAM construction; docs/FORMAT.md):
//
//   header:  0x02 | key version (u32 BE) | segment size (u32 BE) | salt (32) | nonce prefix (7)
//   then:    segment_0 || segment_1 || ... || segment_last
//
// Stream key = HKDF-SHA256(ikm = key version material, salt = salt, info =
// "sealbox/v1/stream" || u8 len(tenant) || tenant || u8 len(key name) || key name ||
// u64 BE len(caller AAD) || caller AAD), as long as the version's key.
// Segment i = AES-GCM(stream key, nonce = prefix || i (u32 BE) || last (0x00/0x01),
// AAD = the 48 header bytes, plaintext_i) || tag (16).
// Every segment but the last carries exactly `segment size` plaintext bytes; the
// last carries fewer (possibly zero) and has the flag set, so each plaintext length
// has exactly one encoding, and truncation, reordering, splicing and trailing data
// are all detected.
#ifndef SEALBOX_CRYPTO_FORMAT_STREAM_H_
#define SEALBOX_CRYPTO_FORMAT_STREAM_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "crypto/aes_gcm.h"
#include "crypto/format/segments.h"
#include "crypto/format/unary.h"
#include "crypto/secret/secret_bytes.h"

namespace sealbox::crypto {

inline constexpr uint8_t kStreamFormatV1 = 0x02;
inline constexpr size_t kStreamSaltBytes = 32;
inline constexpr size_t kStreamNoncePrefixBytes = kSegmentNoncePrefixBytes;
inline constexpr size_t kStreamHeaderBytes =
    1 + 4 + 4 + kStreamSaltBytes + kStreamNoncePrefixBytes;  // 48
inline constexpr uint32_t kDefaultSegmentBytes = 64 * 1024;

using StreamSalt = std::array<uint8_t, kStreamSaltBytes>;
using StreamNoncePrefix = SegmentNoncePrefix;

// The parsed header of a stream.
struct StreamHeader {
  uint32_t key_version = 0;
  uint32_t segment_bytes = 0;
};

// Reads the key version and segment size from the first kStreamHeaderBytes bytes,
// so the caller can find the key. INVALID_ARGUMENT "decryption failed" if malformed.
absl::StatusOr<StreamHeader> ParseStreamHeader(absl::Span<const uint8_t> header);

// Encrypts one stream. Feed plaintext in chunks of any size; get ciphertext back.
// Memory is bounded by one segment whatever the stream's length.
class StreamSealer {
 public:
  // segment_bytes: a power of two in [kMinSegmentBytes, kMaxSegmentBytes], or 0 for
  // the default. Draws a fresh random salt and nonce prefix.
  static absl::StatusOr<std::unique_ptr<StreamSealer>> Create(absl::Span<const uint8_t> material,
                                                              const KeyContext& context,
                                                              absl::Span<const uint8_t> aad,
                                                              uint32_t segment_bytes);

  // Create() with a given salt and nonce prefix: only for tests and the worked
  // examples in docs/FORMAT.md. Repeating a salt and prefix under one key repeats
  // nonces, which breaks GCM completely.
  static absl::StatusOr<std::unique_ptr<StreamSealer>> CreateForTesting(
      absl::Span<const uint8_t> material, const KeyContext& context, absl::Span<const uint8_t> aad,
      uint32_t segment_bytes, const StreamSalt& salt, const StreamNoncePrefix& nonce_prefix);

  // Appends to `out` the header (first call only) and every segment completed by
  // `chunk`. A full segment is never the last one (the last always holds fewer than
  // segment-size bytes, possibly zero), so it is emitted at once. `Output` is
  // std::vector<uint8_t>, std::string or OutputBytes (output_bytes.h: what the
  // server writes into and then hands to gRPC as it is).
  template <typename Output>
  absl::Status Update(absl::Span<const uint8_t> chunk, Output& out);

  // Appends the final segment (and the header if nothing was sent yet). The sealer
  // accepts nothing after it. RESOURCE_EXHAUSTED from either call if the stream
  // would need more than kMaxSegments segments.
  template <typename Output>
  absl::Status Finish(Output& out);

  ~StreamSealer();

 private:
  StreamSealer() = default;
  static absl::StatusOr<std::unique_ptr<StreamSealer>> CreateWith(
      absl::Span<const uint8_t> material, const KeyContext& context, absl::Span<const uint8_t> aad,
      uint32_t segment_bytes, const StreamSalt& salt, const StreamNoncePrefix& nonce_prefix);
  struct State;
  std::unique_ptr<State> state_;
};

// Decrypts one stream. Feed ciphertext in chunks of any size; get plaintext back,
// released only after its segment's tag verified. Memory bounded by one segment.
class StreamOpener {
 public:
  // `material_for_version` is called once, when the header has arrived, to get the
  // key material of the version it names (or an error such as FAILED_PRECONDITION
  // for a disabled version, which is passed through).
  using MaterialLookup = std::function<absl::StatusOr<SecretBytes>(uint32_t key_version)>;

  static std::unique_ptr<StreamOpener> Create(const std::string& tenant,
                                              const std::string& key_name,
                                              absl::Span<const uint8_t> aad,
                                              MaterialLookup material_for_version);

  // Appends verified plaintext to `out`. Any authentication failure, a segment after
  // the last one, or trailing data: INVALID_ARGUMENT "decryption failed". Errors are
  // final: every later call returns the same one. `Output` as for StreamSealer; its
  // old buffer is wiped when it has to grow.
  template <typename Output>
  absl::Status Update(absl::Span<const uint8_t> chunk, Output& out);

  // Call at the end of the input: an error unless the final segment was seen
  // (truncation).
  template <typename Output>
  absl::Status Finish(Output& out);

  // The version from the header, once parsed (0 before).
  uint32_t key_version() const;

  ~StreamOpener();

 private:
  StreamOpener() = default;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_STREAM_H_
