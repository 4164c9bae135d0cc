// A request parsed from its wire form by the parser gRPC uses for a typed method.
// A typed method's handler never sees a malformed request: gRPC answers it
// UNIMPLEMENTED with no message, uncounted and unaudited. Every sealbox plane parses
// its own instead, so that the caller reads INVALID_ARGUMENT naming the message type,
// and the call is counted and audited like any other.
#ifndef SEALBOX_SERVER_RPC_PARSE_REQUEST_H_
#define SEALBOX_SERVER_RPC_PARSE_REQUEST_H_

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace sealbox::server {

template <typename Request>
absl::Status ParseRequest(const grpc::ByteBuffer& wire, Request& request) {
  grpc::ByteBuffer shared(wire);  // the same slices; parsing consumes the buffer
  if (!grpc::SerializationTraits<Request>::Deserialize(&shared, &request).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request is not a valid ", Request::descriptor()->full_name()));
  }
  return absl::OkStatus();
}

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_RPC_PARSE_REQUEST_H_
