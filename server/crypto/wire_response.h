// A response whose one large bytes field goes to gRPC as it is, not copied.
//
// gRPC serializes a typed response into new slices: one more copy of every output
// byte (a 64 KiB Seal's ciphertext, an Open's plaintext), on the server's busiest
// core. Here the output becomes a slice of its own, owned by gRPC until it is sent
// and then released through us (wiped first when it holds plaintext), and only the
// response's small fields are serialized.
#ifndef SEALBOX_SERVER_CRYPTO_WIRE_RESPONSE_H_
#define SEALBOX_SERVER_CRYPTO_WIRE_RESPONSE_H_

#include <cstdint>
#include <string>

#include "crypto/format/output_bytes.h"
#include "google/protobuf/message_lite.h"
#include "grpcpp/support/byte_buffer.h"

namespace sealbox::server {

// The wire form of a response: `bytes` as field `field`, followed by `rest`, the same
// response with that field left empty. Protobuf reads fields in any order; with
// `field` the message's lowest-numbered field this is also the order protobuf itself
// writes. `bytes` is taken over without a copy and wiped on release if `secret`.
grpc::ByteBuffer ResponseAroundBytes(uint32_t field, std::string bytes, bool secret,
                                     const google::protobuf::MessageLite& rest);
grpc::ByteBuffer ResponseAroundBytes(uint32_t field, crypto::OutputBytes bytes, bool secret,
                                     const google::protobuf::MessageLite& rest);

// Moves `from`'s bytes into a new string and leaves `from` empty. A long string's
// heap buffer just changes owner; a short string keeps its bytes inside the object
// itself, where a move would copy them and leave them behind, so when `secret` those
// are copied and wiped in place.
std::string TakeOutput(std::string& from, bool secret);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_CRYPTO_WIRE_RESPONSE_H_
