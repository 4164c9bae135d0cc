// The streams' wire reader (server/dataplane/stream_wire.h) against protobuf: arbitrary
// bytes, cut into gRPC slices where the input says, read as a stream request. What
// it accepts, protobuf must parse to the same start or the same chunk, wherever the
// cuts fall. (It may refuse what protobuf accepts: groups, which no proto3 schema
// has.) The response it writes for the chunk must parse back to it.
//
// Input: cut count n (1, taken mod 8) | n cut offsets (1 byte each, cumulative) |
// the message bytes (the rest).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "crypto/format/output_bytes.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "sealbox/v1/data.pb.h"
#include "server/dataplane/stream_wire.h"

namespace sealbox::fuzz {
namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

std::string Flat(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  Check(buffer.Dump(&slices).ok());
  std::string flat;
  for (const grpc::Slice& s : slices) {
    flat.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return flat;
}

void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const size_t cuts = data[0] % 8;
  if (size < 1 + cuts) return;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1 + cuts, size - 1 - cuts);
  std::vector<grpc::Slice> slices;
  size_t at = 0;
  for (size_t i = 0; i < cuts; ++i) {
    const size_t cut = std::min(bytes.size(), at + data[1 + i]);
    slices.emplace_back(bytes.data() + at, cut - at);
    at = cut;
  }
  slices.emplace_back(bytes.data() + at, bytes.size() - at);
  absl::StatusOr<server::StreamRequestView> view =
      server::ReadStreamRequest(grpc::ByteBuffer(slices.data(), slices.size()));
  if (!view.ok()) {
    Check(absl::IsInvalidArgument(view.status()));
    return;
  }
  v1::SealStreamRequest expected;
  Check(expected.ParseFromString(bytes));
  Check(view->start.has_value() == expected.has_start());
  if (expected.has_start()) {
    Check(view->start->SerializeAsString() == expected.start().SerializeAsString());
    return;
  }
  std::string chunk;
  for (absl::Span<const uint8_t> piece : view->pieces) {
    chunk.append(reinterpret_cast<const char*>(piece.data()), piece.size());
  }
  Check(chunk == expected.plaintext_chunk());
  v1::SealStreamResponse response;
  const uint32_t version = static_cast<uint32_t>(chunk.size() * 2654435761u);
  Check(response.ParseFromString(Flat(
      server::StreamResponse(crypto::OutputBytes(chunk.begin(), chunk.end()), version, true))));
  Check(response.ciphertext_chunk() == chunk && response.key_version() == version);
}

}  // namespace
}  // namespace sealbox::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sealbox::fuzz::Run(data, size);
  return 0;
}
