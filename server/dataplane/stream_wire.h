// The streaming data-plane calls' messages in their wire form, read and written where
// they lie in gRPC's buffers. SealStream and OpenStream share one shape:
//
//   request   oneof { StreamStart start = 1; bytes chunk = 2; }
//   response  bytes chunk = 1; uint32 key_version = 2;
//
// (proto/sealbox/v1/data.proto). Going through the generated classes would copy
// every request's chunk out of gRPC's slices into a string, and every response's
// into new slices: two copies of each byte, a quarter of what a stream costs the
// server beside the transport's own. Here the chunk is read in place and the
// response hands gRPC the output buffer itself, released (and wiped, if it holds
// plaintext) when gRPC is done with it.
#ifndef SEALBOX_SERVER_DATAPLANE_STREAM_WIRE_H_
#define SEALBOX_SERVER_DATAPLANE_STREAM_WIRE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "crypto/format/output_bytes.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "sealbox/v1/data.pb.h"

namespace sealbox::server {

// One request, read from its wire form. The pieces point into `slices`, which keep
// gRPC's buffers alive while they are used.
struct StreamRequestView {
  std::vector<grpc::Slice> slices;
  std::optional<v1::StreamStart> start;           // set: the message is `start`
  std::vector<absl::Span<const uint8_t>> pieces;  // else: the chunk, in order
};

// Reads a request as protobuf would: the last of `start` and `chunk` is the one
// set, unknown fields are skipped. INVALID_ARGUMENT if it is not a valid message.
absl::StatusOr<StreamRequestView> ReadStreamRequest(const grpc::ByteBuffer& request);

// A response carrying `output` (taken over without a copy; wiped when gRPC releases
// it if `secret`: wire_response.h) and `key_version`.
grpc::ByteBuffer StreamResponse(crypto::OutputBytes output, uint32_t key_version, bool secret);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_STREAM_WIRE_H_
