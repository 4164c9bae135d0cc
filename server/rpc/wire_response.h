// A response whose one large bytes field goes to gRPC as it is, not copied.
//
// gRPC serializes a typed response into new slices: one more copy of every output
// byte (a 64 KiB Seal's ciphertext, an Open's plaintext), on the server's busiest
// core. Here the output becomes a slice of its own, owned by gRPC until it is sent
// and then released through us (wiped first when it holds plaintext), and only the
// response's small fields are serialized.
#ifndef SEALBOX_SERVER_RPC_WIRE_RESPONSE_H_
#define SEALBOX_SERVER_RPC_WIRE_RESPONSE_H_

#include <cstdint>

#include "crypto/format/output_bytes.h"
#include "google/protobuf/message_lite.h"
#include "grpcpp/support/byte_buffer.h"

namespace sealbox::server {

// The wire form of a response: `bytes` as field `field`, followed by `rest`, the same
// response with that field left empty. Protobuf reads fields in any order; with
// `field` the message's lowest-numbered field this is also the order protobuf itself
// writes. `bytes` is taken over without a copy (its buffer is always on the heap,
// whatever its size) and wiped on release if `secret`.
grpc::ByteBuffer ResponseAroundBytes(uint32_t field, crypto::OutputBytes bytes, bool secret,
                                     const google::protobuf::MessageLite& rest);

// The wire form of a response with no such field: serialized as gRPC would.
grpc::ByteBuffer SerializedResponse(const google::protobuf::MessageLite& response);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_RPC_WIRE_RESPONSE_H_
