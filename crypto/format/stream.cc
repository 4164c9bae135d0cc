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

namespace sealbox::crypto {
namespace {

// Header offsets: 0x02 | version (4) | segment size (4) | salt (32) | nonce prefix (7).
constexpr size_t kVersionOffset = 1;
constexpr size_t kSegmentSizeOffset = kVersionOffset + 4;
constexpr size_t kSaltOffset = kSegmentSizeOffset + 4;
constexpr size_t kPrefixOffset = kSaltOffset + kStreamSaltBytes;
using Header = std::array<uint8_t, kStreamHeaderBytes>;

SegmentNoncePrefix PrefixOf(absl::Span<const uint8_t> header) {
  SegmentNoncePrefix prefix;
  std::copy_n(&header[kPrefixOffset], prefix.size(), prefix.begin());
  return prefix;
}

// The stream key from the header's salt; info binds tenant, key name and caller AAD.
absl::StatusOr<std::unique_ptr<ExpandedKey>> StreamKey(absl::Span<const uint8_t> material,
                                                       absl::string_view tenant,
                                                       absl::string_view key_name,
                                                       absl::Span<const uint8_t> aad,
                                                       absl::Span<const uint8_t> header) {
  absl::StatusOr<std::vector<uint8_t>> info = StreamInfo(tenant, key_name, aad);
  if (!info.ok()) return info.status();
  absl::StatusOr<SecretBytes> key =
      DeriveSubkey(material, header.subspan(kSaltOffset, kStreamSaltBytes), *info);
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
  Header header{};  // also every segment's GCM AAD
  bool header_sent = false;
  std::unique_ptr<SegmentSealer> segments;

  template <typename Output>
  void SendHeaderOnce(Output& out) {
    if (header_sent) return;
    out.insert(out.end(), header.begin(), header.end());
    header_sent = true;
  }
};

absl::StatusOr<std::unique_ptr<StreamSealer>> StreamSealer::Create(
    absl::Span<const uint8_t> material, const KeyContext& context, absl::Span<const uint8_t> aad,
    uint32_t segment_bytes) {
  StreamSalt salt;
  StreamNoncePrefix prefix;
  if (RAND_bytes(salt.data(), salt.size()) != 1 || RAND_bytes(prefix.data(), prefix.size()) != 1) {
    return absl::InternalError("RAND_bytes failed");
  }
  return CreateWith(material, context, aad, segment_bytes, salt, prefix);
}

absl::StatusOr<std::unique_ptr<StreamSealer>> StreamSealer::CreateForTesting(
    absl::Span<const uint8_t> material, const KeyContext& context, absl::Span<const uint8_t> aad,
    uint32_t segment_bytes, const StreamSalt& salt, const StreamNoncePrefix& nonce_prefix) {
  return CreateWith(material, context, aad, segment_bytes, salt, nonce_prefix);
}

absl::StatusOr<std::unique_ptr<StreamSealer>> StreamSealer::CreateWith(
    absl::Span<const uint8_t> material, const KeyContext& context, absl::Span<const uint8_t> aad,
    uint32_t segment_bytes, const StreamSalt& salt, const StreamNoncePrefix& nonce_prefix) {
  if (segment_bytes == 0) segment_bytes = kDefaultSegmentBytes;
  if (!ValidSegmentSize(segment_bytes)) {
    return absl::InvalidArgumentError("segment size must be a power of two from 4 KiB to 4 MiB");
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
  state->segments =
      std::make_unique<SegmentSealer>(*std::move(key), nonce_prefix, state->header, segment_bytes);
  std::unique_ptr<StreamSealer> sealer(new StreamSealer());
  sealer->state_ = std::move(state);
  return sealer;
}

template <typename Output>
absl::Status StreamSealer::Update(absl::Span<const uint8_t> chunk, Output& out) {
  state_->SendHeaderOnce(out);
  return state_->segments->Update(chunk, out);
}

template <typename Output>
absl::Status StreamSealer::Finish(Output& out) {
  state_->SendHeaderOnce(out);
  return state_->segments->Finish(out);
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
  std::unique_ptr<SegmentOpener> segments;  // set once the header is complete
  absl::Status error;                       // sticky: a failure before the segments

  absl::Status StartStream() {
    absl::StatusOr<StreamHeader> p = ParseStreamHeader(header);
    if (!p.ok()) return p.status();
    parsed = *p;
    // Errors from the lookup (disabled version, ...) pass through as they are.
    absl::StatusOr<SecretBytes> material = material_for_version(parsed.key_version);
    if (!material.ok()) return material.status();
    absl::StatusOr<std::unique_ptr<ExpandedKey>> key =
        StreamKey(material->span(), tenant, key_name, aad, header);
    if (!key.ok()) return key.status();
    segments = std::make_unique<SegmentOpener>(*std::move(key), PrefixOf(header), header,
                                               parsed.segment_bytes);
    return absl::OkStatus();
  }

  // Gathers the header; what follows it goes to the segments.
  template <typename Output>
  absl::Status Consume(absl::Span<const uint8_t> chunk, Output& out) {
    if (segments == nullptr) {
      if (!error.ok()) return error;
      const size_t n = std::min(kStreamHeaderBytes - header.size(), chunk.size());
      header.insert(header.end(), chunk.begin(), chunk.begin() + n);
      chunk.remove_prefix(n);
      if (header.size() < kStreamHeaderBytes) return absl::OkStatus();
      error = StartStream();
      if (!error.ok()) return error;
    }
    return segments->Update(chunk, out);
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
  return state_->Consume(chunk, out);
}

template <typename Output>
absl::Status StreamOpener::Finish(Output& out) {
  State& s = *state_;
  if (s.segments == nullptr) {
    // A short header means truncation; later calls keep failing.
    if (s.error.ok()) s.error = DecryptionFailedError();
    return s.error;
  }
  return s.segments->Finish(out);
}

// The three kinds of output the header allows.
template absl::Status StreamSealer::Update(absl::Span<const uint8_t>, std::vector<uint8_t>&);
template absl::Status StreamSealer::Update(absl::Span<const uint8_t>, std::string&);
template absl::Status StreamSealer::Finish(std::vector<uint8_t>&);
template absl::Status StreamSealer::Finish(std::string&);
template absl::Status StreamOpener::Update(absl::Span<const uint8_t>, std::vector<uint8_t>&);
template absl::Status StreamOpener::Update(absl::Span<const uint8_t>, std::string&);
template absl::Status StreamOpener::Finish(std::vector<uint8_t>&);
template absl::Status StreamOpener::Finish(std::string&);
template absl::Status StreamSealer::Update(absl::Span<const uint8_t>, OutputBytes&);
template absl::Status StreamSealer::Finish(OutputBytes&);
template absl::Status StreamOpener::Update(absl::Span<const uint8_t>, OutputBytes&);
template absl::Status StreamOpener::Finish(OutputBytes&);

uint32_t StreamOpener::key_version() const { return state_->parsed.key_version; }

StreamOpener::~StreamOpener() = default;

}  // namespace sealbox::crypto
