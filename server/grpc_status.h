// The one place where absl::Status becomes grpc::Status: the edge of the service.
#ifndef SEALBOX_SERVER_GRPC_STATUS_H_
#define SEALBOX_SERVER_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace sealbox::server {

// Same code, message cut to a bounded length; a decryption failure also carries its
// reason in the details (data.proto, ErrorReason).
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_GRPC_STATUS_H_
