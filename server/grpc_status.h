// The one place where absl::Status becomes what the wire carries: a call's
// grpc::Status, or a batch item's v1::ItemError.
#ifndef SEALBOX_SERVER_GRPC_STATUS_H_
#define SEALBOX_SERVER_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"
#include "sealbox/v1/data.pb.h"

namespace sealbox::server {

// Same code, message cut to a bounded length; a decryption failure also carries its
// reason in the details (data.proto, ErrorReason).
grpc::Status ToGrpcStatus(const absl::Status& status);

// The same for one item of a batch call: code, the same bounded message, and the
// reason as a field.
v1::ItemError ToItemError(const absl::Status& status);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_GRPC_STATUS_H_
