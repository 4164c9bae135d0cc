#include "crypto/format/segments.h"

#include <algorithm>
#include <string>
#include <utility>

#include "crypto/byte_order/byte_order.h"
#include "crypto/decryption_failure.h"
#include "crypto/secret/secure_wipe.h"

namespace sealbox::crypto {
namespace {

constexpr size_t kTagBytes = 16;
using Nonce = std::array<uint8_t, 12>;

// A segment that is not the last needs room for one more index after it.
bool IndexFits(uint64_t index, bool last) {
  return last ? index < kMaxSegments : index + 1 < kMaxSegments;
}

//   nonce = prefix (7) || segment index (u32 BE) || last (0x00 or 0x01)
// The index fixes each segment's position and the flag marks the end, so a segment
// moved, dropped or taken from another stream (another prefix or key) fails its tag.
Nonce SegmentNonce(const SegmentNoncePrefix& prefix, uint64_t index, bool last) {
  Nonce nonce;
  std::copy(prefix.begin(), prefix.end(), nonce.begin());
  StoreBigEndian32(static_cast<uint32_t>(index), &nonce[kSegmentNoncePrefixBytes]);
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

absl::Status SealerDone() { return absl::FailedPreconditionError("already finished or failed"); }

}  // namespace

bool ValidSegmentSize(uint32_t bytes) {
  const bool power_of_two = (bytes & (bytes - 1)) == 0;
  return power_of_two && bytes >= kMinSegmentBytes && bytes <= kMaxSegmentBytes;
}

// ---------------------------------------------------------------------------------
// Sealer

SegmentSealer::SegmentSealer(std::unique_ptr<ExpandedKey> key, const SegmentNoncePrefix& prefix,
                             absl::Span<const uint8_t> aad, uint32_t segment_bytes)
    : key_(std::move(key)),
      prefix_(prefix),
      aad_(aad.begin(), aad.end()),
      plaintext_(segment_bytes) {}

template <typename Output>
absl::Status SegmentSealer::Seal(absl::Span<const uint8_t> segment, bool last, Output& out) {
  if (!IndexFits(next_index_, last)) {
    return absl::ResourceExhaustedError("longer than 2^32 segments");
  }
  const size_t at = out.size();
  const absl::Span<uint8_t> sealed = Grow(out, segment.size() + kTagBytes);
  const absl::Status status = key_->Seal(SegmentNonce(prefix_, next_index_, last), aad_, segment,
                                         sealed.first(segment.size()), sealed.last(kTagBytes));
  if (!status.ok()) {
    out.resize(at);
    return status;
  }
  ++next_index_;
  return absl::OkStatus();
}

template <typename Output>
absl::Status SegmentSealer::Update(absl::Span<const uint8_t> chunk, Output& out) {
  if (finished_) return SealerDone();
  const size_t size = plaintext_.size();
  while (!chunk.empty()) {
    absl::Status status;
    if (buffered_ == 0 && chunk.size() >= size) {
      status = Seal(chunk.first(size), /*last=*/false, out);  // no copy needed
      chunk.remove_prefix(size);
    } else {
      const size_t n = std::min(size - buffered_, chunk.size());
      std::copy_n(chunk.data(), n, plaintext_.data() + buffered_);
      buffered_ += n;
      chunk.remove_prefix(n);
      if (buffered_ < size) break;
      status = Seal(plaintext_.span(), /*last=*/false, out);
      buffered_ = 0;
    }
    if (!status.ok()) {
      finished_ = true;
      return status;
    }
  }
  return absl::OkStatus();
}

template <typename Output>
absl::Status SegmentSealer::Finish(Output& out) {
  if (finished_) return SealerDone();
  finished_ = true;
  const absl::Status status = Seal(plaintext_.span().first(buffered_), /*last=*/true, out);
  SecureWipe(plaintext_.data(), buffered_);
  buffered_ = 0;
  return status;
}

// ---------------------------------------------------------------------------------
// Opener

SegmentOpener::SegmentOpener(std::unique_ptr<ExpandedKey> key, const SegmentNoncePrefix& prefix,
                             absl::Span<const uint8_t> aad, uint32_t segment_bytes)
    : key_(std::move(key)),
      prefix_(prefix),
      aad_(aad.begin(), aad.end()),
      segment_bytes_(segment_bytes) {
  sealed_.reserve(segment_bytes_ + kTagBytes);
}

// Verifies one segment and only then appends its plaintext to `out`: decrypted
// straight into place, since Open wipes its output when the tag does not verify.
template <typename Output>
absl::Status SegmentOpener::Open(absl::Span<const uint8_t> segment, bool last, Output& out) {
  if (segment.size() < kTagBytes || !IndexFits(next_index_, last)) {
    return DecryptionFailedError();
  }
  const size_t n = segment.size() - kTagBytes;
  ReservePlaintext(n, out);
  const size_t at = out.size();
  if (!key_->Open(SegmentNonce(prefix_, next_index_, last), aad_, segment.first(n),
                  segment.last(kTagBytes), Grow(out, n))
           .ok()) {
    out.resize(at);
    return DecryptionFailedError();
  }
  ++next_index_;
  return absl::OkStatus();
}

// size + tag bytes can only be a segment that is not the last, since the last holds
// fewer plaintext bytes; so it is opened at once and memory stays bounded.
template <typename Output>
absl::Status SegmentOpener::Consume(absl::Span<const uint8_t> chunk, Output& out) {
  const size_t full = segment_bytes_ + kTagBytes;
  while (!chunk.empty()) {
    if (sealed_.empty() && chunk.size() >= full) {
      absl::Status status = Open(chunk.first(full), /*last=*/false, out);
      if (!status.ok()) return status;
      chunk.remove_prefix(full);
      continue;
    }
    const size_t n = std::min(full - sealed_.size(), chunk.size());
    sealed_.insert(sealed_.end(), chunk.begin(), chunk.begin() + n);
    chunk.remove_prefix(n);
    if (sealed_.size() == full) {
      absl::Status status = Open(sealed_, /*last=*/false, out);
      if (!status.ok()) return status;
      sealed_.clear();
    }
  }
  return absl::OkStatus();
}

template <typename Output>
absl::Status SegmentOpener::Update(absl::Span<const uint8_t> chunk, Output& out) {
  if (!error_.ok()) return error_;
  error_ = Consume(chunk, out);
  return error_;
}

template <typename Output>
absl::Status SegmentOpener::Finish(Output& out) {
  if (!error_.ok()) return error_;
  // Whatever is left must be the last segment: tag plus fewer than segment-size
  // bytes. Nothing left means truncation.
  absl::Status status = Open(sealed_, /*last=*/true, out);
  // Anything fed after the end would be trailing data.
  error_ = status.ok() ? DecryptionFailedError() : status;
  return status;
}

// The three kinds of output the header allows.
template absl::Status SegmentSealer::Update(absl::Span<const uint8_t>, std::vector<uint8_t>&);
template absl::Status SegmentSealer::Update(absl::Span<const uint8_t>, std::string&);
template absl::Status SegmentSealer::Finish(std::vector<uint8_t>&);
template absl::Status SegmentSealer::Finish(std::string&);
template absl::Status SegmentOpener::Update(absl::Span<const uint8_t>, std::vector<uint8_t>&);
template absl::Status SegmentOpener::Update(absl::Span<const uint8_t>, std::string&);
template absl::Status SegmentOpener::Finish(std::vector<uint8_t>&);
template absl::Status SegmentOpener::Finish(std::string&);
template absl::Status SegmentSealer::Update(absl::Span<const uint8_t>, OutputBytes&);
template absl::Status SegmentSealer::Finish(OutputBytes&);
template absl::Status SegmentOpener::Update(absl::Span<const uint8_t>, OutputBytes&);
template absl::Status SegmentOpener::Finish(OutputBytes&);

}  // namespace sealbox::crypto
