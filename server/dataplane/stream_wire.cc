#include "server/dataplane/stream_wire.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "server/rpc/wire_response.h"

namespace sealbox::server {
namespace {

// Field numbers: the request's oneof, and the response's chunk.
constexpr uint64_t kStartField = 1;
constexpr uint64_t kChunkField = 2;
constexpr uint32_t kResponseChunkField = 1;
// Protobuf's limits: a tag fits 32 bits (so field numbers stay below 2^29), a
// length 31.
constexpr uint64_t kMaxTag = 0xffffffff;
constexpr uint64_t kMaxLength = 0x7fffffff;

// Protobuf's wire types.
enum WireType : uint64_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

absl::Status Malformed() {
  return absl::InvalidArgumentError("the message is not a valid stream request");
}

// Reads a message that gRPC holds in several slices, byte by byte only for the
// small things (keys, lengths); a length-delimited field's bytes stay where they are.
class WireReader {
 public:
  explicit WireReader(const std::vector<grpc::Slice>& slices) : slices_(slices) { SkipEmpty(); }

  bool done() const { return slice_ == slices_.size(); }

  // A varint of at most `max_bytes` bytes (protobuf reads a tag or a length in at
  // most 5, any other varint in at most 10) and at most `max_value`.
  bool ReadVarint(uint64_t& value, int max_bytes = 10, uint64_t max_value = ~uint64_t{0}) {
    value = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (done()) return false;
      const uint8_t byte = slices_[slice_].begin()[offset_];
      Advance(1);
      value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) return value <= max_value;
    }
    return false;  // longer than allowed
  }

  // The next `n` bytes, as pieces of the slices they lie in.
  bool Take(uint64_t n, std::vector<absl::Span<const uint8_t>>* pieces) {
    while (n > 0) {
      if (done()) return false;
      const grpc::Slice& slice = slices_[slice_];
      const size_t here = static_cast<size_t>(std::min<uint64_t>(n, slice.size() - offset_));
      if (pieces != nullptr) pieces->emplace_back(slice.begin() + offset_, here);
      Advance(here);
      n -= here;
    }
    return true;
  }

 private:
  void Advance(size_t n) {
    offset_ += n;
    SkipEmpty();
  }

  void SkipEmpty() {
    while (slice_ < slices_.size() && offset_ == slices_[slice_].size()) {
      ++slice_;
      offset_ = 0;
    }
  }

  const std::vector<grpc::Slice>& slices_;
  size_t slice_ = 0;   // the slice being read
  size_t offset_ = 0;  // within it
};

}  // namespace

absl::StatusOr<StreamRequestView> ReadStreamRequest(const grpc::ByteBuffer& request) {
  StreamRequestView view;
  if (!request.Dump(&view.slices).ok()) return Malformed();
  WireReader in(view.slices);
  // Which of the oneof's fields came last (0: neither). As protobuf does: every
  // `start` must parse, one that follows another merges into it, one that follows a
  // chunk starts afresh; a chunk replaces whatever came before.
  uint64_t last = 0;
  v1::StreamStart start;
  std::vector<absl::Span<const uint8_t>> chunk;
  while (!in.done()) {
    uint64_t key = 0;
    if (!in.ReadVarint(key, 5, kMaxTag) || (key >> 3) == 0) {
      return Malformed();
    }
    const uint64_t field = key >> 3;
    uint64_t size = 0;
    switch (key & 7) {
      case kVarint:
        if (!in.ReadVarint(size)) return Malformed();
        break;
      case kFixed64:
        if (!in.Take(8, nullptr)) return Malformed();
        break;
      case kFixed32:
        if (!in.Take(4, nullptr)) return Malformed();
        break;
      case kLength:
        if (!in.ReadVarint(size, 5, kMaxLength)) return Malformed();
        if (field == kStartField) {
          std::vector<absl::Span<const uint8_t>> pieces;
          if (!in.Take(size, &pieces)) return Malformed();
          std::string bytes;
          for (absl::Span<const uint8_t> piece : pieces) {
            bytes.append(reinterpret_cast<const char*>(piece.data()), piece.size());
          }
          if (last != kStartField) start.Clear();
          if (!start.MergeFromString(bytes)) return Malformed();
          last = kStartField;
        } else if (field == kChunkField) {
          chunk.clear();
          if (!in.Take(size, &chunk)) return Malformed();
          last = kChunkField;
        } else if (!in.Take(size, nullptr)) {
          return Malformed();
        }
        break;
      default:  // groups (deprecated, never in a proto3 schema) and invalid types
        return Malformed();
    }
  }
  if (last == kStartField) {
    view.start = std::move(start);
  } else {
    view.pieces = std::move(chunk);
  }
  return view;
}

grpc::ByteBuffer StreamResponse(crypto::OutputBytes output, uint32_t key_version, bool secret) {
  v1::SealStreamResponse rest;  // OpenStreamResponse's fields are numbered alike
  rest.set_key_version(key_version);
  return ResponseAroundBytes(kResponseChunkField, std::move(output), secret, rest);
}

}  // namespace sealbox::server
