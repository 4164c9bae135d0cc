#include "crypto/format/stream.h"

#include <openssl/rand.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "crypto/byte_order/byte_order.h"
#include "crypto/decryption_failure.h"
#include "crypto/format/derivation.h"
#include "crypto/secret/secure_wipe.h"

namespace sealbox::crypto {
namespace {

// Header offsets: 0x02 | version (4) | segment size (4) | salt (32) | nonce prefix (7).
constexpr size_t kVersionOffset = 1;
constexpr size_t kSegmentSizeOffset = kVersionOffset + 4;
constexpr size_t kSaltOffset = kSegmentSizeOffset + 4;
constexpr size_t kPrefixOffset = kSaltOffset + kStreamSaltBytes;
constexpr size_t kTagBytes = 16;
using Header = std::array<uint8_t, kStreamHeaderBytes>;
using Nonce = std::array<uint8_t, 12>;

bool ValidSegmentSize(uint32_t bytes) {
  const bool power_of_two = (bytes & (bytes - 1)) == 0;
  return power_of_two && bytes >= kMinSegmentBytes && bytes <= kMaxSegmentBytes;
}

// A segment that is not the last needs room for one more index after it.
bool IndexFits(uint64_t index, bool last) {
  return last ? index < kMaxSegments : index + 1 < kMaxSegments;
}

//   nonce = prefix (7) || segment index (u32 BE) || last (0x00 or 0x01)
// The index fixes each segment's position and the flag marks the end, so a segment
// moved, dropped or taken from another stream (another prefix or key) fails its tag.
Nonce SegmentNonce(absl::Span<const uint8_t> header, uint64_t index, bool last) {
  Nonce nonce;
  std::copy_n(&header[kPrefixOffset], kStreamNoncePrefixBytes, nonce.begin());
  StoreBigEndian32(static_cast<uint32_t>(index), &nonce[kStreamNoncePrefixBytes]);
  nonce[11] = last ? 1 : 0;
  return nonce;
}

// Makes room for `n` more bytes of plaintext in the caller's `out`. Letting `out`
// grow by itself would free its old buffer, earlier plaintext and all, unwiped; so it
// grows here instead, wiping the old buffer.
template <typename Output>
void ReservePlaintext(size_t n, Output& out) {
  if (out.capacity() - out.size() >= n) return;
  Output grown;
  grown.reserve(std::max(2 * out.capacity(), out.size() + n));
  grown.assign(out.begin(), out.end());
  SecureWipe(out.data(), out.size());
  out.swap(grown);
}

// Lengthens `out` by `n` bytes and returns them, to be written in place.
template <typename Output>
absl::Span<uint8_t> Grow(Output& out, size_t n) {
  const size_t at = out.size();
  out.resize(at + n);
  return absl::MakeSpan(reinterpret_cast<uint8_t*>(out.data()) + at, n);
}

absl::Status SealerDone() {
  return absl::FailedPreconditionError("stream already finished or failed");
}

// The stream key from the header's salt; info binds tenant, key name and caller AAD.
absl::StatusOr<std::unique_ptr<ExpandedKey>> StreamKey(
    absl::Span<const uint8_t> material, absl::string_view tenant,
    absl::string_view key_name, absl::Span<const uint8_t> aad,
    absl::Span<const uint8_t> header) {
  absl::StatusOr<std::vector<uint8_t>> info = StreamInfo(tenant, key_name, aad);
  if (!info.ok()) return info.status();
  absl::StatusOr<SecretBytes> key = DeriveSubkey(
      material, header.subspan(kSaltOffset, kStreamSaltBytes), *info);
  if (!key.ok()) return key.status();
  return ExpandedKey::Create(key->span());
}

}  // namespace

absl::StatusOr<StreamHeader> ParseStreamHeader(absl::Span<const uint8_t> header) {
  if (header.size() < kStreamHeaderBytes || header[0] != kStreamFormatV1) {
    return DecryptionFailedError();
  }
  StreamHeader parsed;
  parsed.key_version = LoadBigEndian32(&header[kVersionOffset]);
  parsed.segment_bytes = LoadBigEndian32(&header[kSegmentSizeOffset]);
  // The size decides how much the opener buffers, so it is checked before use.
  if (!ValidSegmentSize(parsed.segment_bytes)) return DecryptionFailedError();
  return parsed;
}

// ---------------------------------------------------------------------------------
// Sealer

struct StreamSealer::State {
  std::unique_ptr<ExpandedKey> key;
  Header header{};  // also every segment's GCM AAD
  bool header_sent = false;
  bool finished = false;
  uint64_t next_index = 0;
  SecretBytes plaintext;  // the segment being filled: segment_bytes long
  size_t buffered = 0;

  size_t segment_bytes() const { return plaintext.size(); }

  template <typename Output>
  absl::Status Seal(absl::Span<const uint8_t> segment, bool last, Output& out) {
    if (!IndexFits(next_index, last)) {
      return absl::ResourceExhaustedError("stream longer than 2^32 segments");
    }
    const size_t at = out.size();
    const absl::Span<uint8_t> sealed = Grow(out, segment.size() + kTagBytes);
    const absl::Status status =
        key->Seal(SegmentNonce(header, next_index, last), header, segment,
                  sealed.first(segment.size()), sealed.last(kTagBytes));
    if (!status.ok()) {
      out.resize(at);
      return status;
    }
    ++next_index;
    return absl::OkStatus();
  }

  template <typename Output>
  void SendHeaderOnce(Output& out) {
    if (header_sent) return;
    out.insert(out.end(), header.begin(), header.end());
    header_sent = true;
  }
};

absl::StatusOr<std::unique_ptr<StreamSealer>> StreamSealer::Create(
    absl::Span<const uint8_t> material, const KeyContext& context,
    absl::Span<const uint8_t> aad, uint32_t segment_bytes) {
  StreamSalt salt;
  StreamNoncePrefix prefix;
  if (RAND_bytes(salt.data(), salt.size()) != 1 ||
      RAND_bytes(prefix.data(), prefix.size()) != 1) {
    return absl::InternalError("RAND_bytes failed");
  }
  return CreateWith(material, context, aad, segment_bytes, salt, prefix);
}

absl::StatusOr<std::unique_ptr<StreamSealer>> StreamSealer::CreateForTesting(
    absl::Span<const uint8_t> material, const KeyContext& context,
    absl::Span<const uint8_t> aad, uint32_t segment_bytes, const StreamSalt& salt,
    const StreamNoncePrefix& nonce_prefix) {
  return CreateWith(material, context, aad, segment_bytes, salt, nonce_prefix);
}

absl::StatusOr<std::unique_ptr<StreamSealer>> StreamSealer::CreateWith(
    absl::Span<const uint8_t> material, const KeyContext& context,
    absl::Span<const uint8_t> aad, uint32_t segment_bytes, const StreamSalt& salt,
    const StreamNoncePrefix& nonce_prefix) {
  if (segment_bytes == 0) segment_bytes = kDefaultSegmentBytes;
  if (!ValidSegmentSize(segment_bytes)) {
    return absl::InvalidArgumentError(
        "segment size must be a power of two from 4 KiB to 4 MiB");
  }
  auto state = std::make_unique<State>();
  state->header[0] = kStreamFormatV1;
  StoreBigEndian32(context.version, &state->header[kVersionOffset]);
  StoreBigEndian32(segment_bytes, &state->header[kSegmentSizeOffset]);
  std::copy(salt.begin(), salt.end(), &state->header[kSaltOffset]);
  std::copy(nonce_prefix.begin(), nonce_prefix.end(), &state->header[kPrefixOffset]);

  absl::StatusOr<std::unique_ptr<ExpandedKey>> key =
      StreamKey(material, context.tenant, context.key_name, aad, state->header);
  if (!key.ok()) return key.status();
  state->key = *std::move(key);
  state->plaintext = SecretBytes(segment_bytes);

  std::unique_ptr<StreamSealer> sealer(new StreamSealer());
  sealer->state_ = std::move(state);
  return sealer;
}

template <typename Output>
absl::Status StreamSealer::Update(absl::Span<const uint8_t> chunk, Output& out) {
  State& s = *state_;
  if (s.finished) return SealerDone();
  s.SendHeaderOnce(out);
  // A full segment is never the last (the last holds fewer bytes): seal it at once.
  const size_t size = s.segment_bytes();
  while (!chunk.empty()) {
    absl::Status status;
    if (s.buffered == 0 && chunk.size() >= size) {
      status = s.Seal(chunk.first(size), /*last=*/false, out);  // no copy needed
      chunk.remove_prefix(size);
    } else {
      const size_t n = std::min(size - s.buffered, chunk.size());
      std::copy_n(chunk.data(), n, s.plaintext.data() + s.buffered);
      s.buffered += n;
      chunk.remove_prefix(n);
      if (s.buffered < size) break;
      status = s.Seal(s.plaintext.span(), /*last=*/false, out);
      s.buffered = 0;
    }
    if (!status.ok()) {
      s.finished = true;
      return status;
    }
  }
  return absl::OkStatus();
}

template <typename Output>
absl::Status StreamSealer::Finish(Output& out) {
  State& s = *state_;
  if (s.finished) return SealerDone();
  s.finished = true;
  s.SendHeaderOnce(out);
  const absl::Status status =
      s.Seal(s.plaintext.span().first(s.buffered), /*last=*/true, out);
  SecureWipe(s.plaintext.data(), s.buffered);
  s.buffered = 0;
  return status;
}

StreamSealer::~StreamSealer() = default;

// ---------------------------------------------------------------------------------
// Opener

struct StreamOpener::State {
  std::string tenant;
  std::string key_name;
  std::vector<uint8_t> aad;
  MaterialLookup material_for_version;

  std::vector<uint8_t> header;  // gathered until kStreamHeaderBytes long
  StreamHeader parsed;
  std::unique_ptr<ExpandedKey> key;  // set once the header is complete
  uint64_t next_index = 0;
  std::vector<uint8_t> sealed;  // the segment being gathered, up to size + tag
  absl::Status error;           // sticky: the first failure, or "finished"

  size_t sealed_segment_bytes() const { return parsed.segment_bytes + kTagBytes; }

  absl::Status StartStream() {
    absl::StatusOr<StreamHeader> p = ParseStreamHeader(header);
    if (!p.ok()) return p.status();
    parsed = *p;
    // Errors from the lookup (disabled version, ...) pass through as they are.
    absl::StatusOr<SecretBytes> material = material_for_version(parsed.key_version);
    if (!material.ok()) return material.status();
    absl::StatusOr<std::unique_ptr<ExpandedKey>> k =
        StreamKey(material->span(), tenant, key_name, aad, header);
    if (!k.ok()) return k.status();
    key = *std::move(k);
    sealed.reserve(sealed_segment_bytes());
    return absl::OkStatus();
  }

  // Verifies one segment and only then appends its plaintext to `out`: decrypted
  // straight into place, since Open wipes its output when the tag does not verify.
  template <typename Output>
  absl::Status Open(absl::Span<const uint8_t> segment, bool last, Output& out) {
    if (segment.size() < kTagBytes || !IndexFits(next_index, last)) {
      return DecryptionFailedError();
    }
    const size_t n = segment.size() - kTagBytes;
    ReservePlaintext(n, out);
    const size_t at = out.size();
    if (!key->Open(SegmentNonce(header, next_index, last), header, segment.first(n),
                   segment.last(kTagBytes), Grow(out, n))
             .ok()) {
      out.resize(at);
      return DecryptionFailedError();
    }
    ++next_index;
    return absl::OkStatus();
  }

  template <typename Output>
  absl::Status Consume(absl::Span<const uint8_t> chunk, Output& out) {
    if (key == nullptr) {
      const size_t n = std::min(kStreamHeaderBytes - header.size(), chunk.size());
      header.insert(header.end(), chunk.begin(), chunk.begin() + n);
      chunk.remove_prefix(n);
      if (header.size() < kStreamHeaderBytes) return absl::OkStatus();
      absl::Status status = StartStream();
      if (!status.ok()) return status;
    }
    // size + tag bytes can only be a segment that is not the last, since the last
    // holds fewer plaintext bytes; so it is opened at once and memory stays bounded.
    const size_t full = sealed_segment_bytes();
    while (!chunk.empty()) {
      if (sealed.empty() && chunk.size() >= full) {
        absl::Status status = Open(chunk.first(full), /*last=*/false, out);
        if (!status.ok()) return status;
        chunk.remove_prefix(full);
        continue;
      }
      const size_t n = std::min(full - sealed.size(), chunk.size());
      sealed.insert(sealed.end(), chunk.begin(), chunk.begin() + n);
      chunk.remove_prefix(n);
      if (sealed.size() == full) {
        absl::Status status = Open(sealed, /*last=*/false, out);
        if (!status.ok()) return status;
        sealed.clear();
      }
    }
    return absl::OkStatus();
  }

  // Whatever is left at the end must be the last segment: tag plus fewer than
  // segment-size bytes. Nothing left, or a short header, means truncation.
  template <typename Output>
  absl::Status Finish(Output& out) {
    if (key == nullptr) return DecryptionFailedError();
    return Open(sealed, /*last=*/true, out);
  }
};

std::unique_ptr<StreamOpener> StreamOpener::Create(const std::string& tenant,
                                                   const std::string& key_name,
                                                   absl::Span<const uint8_t> aad,
                                                   MaterialLookup material_for_version) {
  auto state = std::make_unique<State>();
  state->tenant = tenant;
  state->key_name = key_name;
  state->aad.assign(aad.begin(), aad.end());
  state->material_for_version = std::move(material_for_version);
  std::unique_ptr<StreamOpener> opener(new StreamOpener());
  opener->state_ = std::move(state);
  return opener;
}

template <typename Output>
absl::Status StreamOpener::Update(absl::Span<const uint8_t> chunk, Output& out) {
  State& s = *state_;
  if (!s.error.ok()) return s.error;
  s.error = s.Consume(chunk, out);
  return s.error;
}

template <typename Output>
absl::Status StreamOpener::Finish(Output& out) {
  State& s = *state_;
  if (!s.error.ok()) return s.error;
  absl::Status status = s.Finish(out);
  // Anything fed after the end would be trailing data.
  s.error = status.ok() ? DecryptionFailedError() : status;
  return status;
}

// The two kinds of output the header allows.
template absl::Status StreamSealer::Update(absl::Span<const uint8_t>, std::vector<uint8_t>&);
template absl::Status StreamSealer::Update(absl::Span<const uint8_t>, std::string&);
template absl::Status StreamSealer::Finish(std::vector<uint8_t>&);
template absl::Status StreamSealer::Finish(std::string&);
template absl::Status StreamOpener::Update(absl::Span<const uint8_t>, std::vector<uint8_t>&);
template absl::Status StreamOpener::Update(absl::Span<const uint8_t>, std::string&);
template absl::Status StreamOpener::Finish(std::vector<uint8_t>&);
template absl::Status StreamOpener::Finish(std::string&);

uint32_t StreamOpener::key_version() const { return state_->parsed.key_version; }

StreamOpener::~StreamOpener() = default;

}  // namespace sealbox::crypto
