// The API's machine-readable error reasons (data.proto, ErrorReason) as gRPC status
// details: google.rpc.Status holding one google.rpc.ErrorInfo whose domain is the
// API's package ("sealbox.v1") and whose reason is the ErrorReason's name. The
// server sends them and clients read them, so neither depends on message text.
#ifndef SEALBOX_PROTO_SEALBOX_V1_ERROR_REASON_H_
#define SEALBOX_PROTO_SEALBOX_V1_ERROR_REASON_H_

#include "grpcpp/support/status.h"
#include "sealbox/v1/data.pb.h"

namespace sealbox::v1 {

// A status with `code` and `message` whose details name `reason`.
grpc::Status StatusWithReason(grpc::StatusCode code, const std::string& message,
                              ErrorReason reason);

// Whether `status`'s details name `reason`.
bool HasReason(const grpc::Status& status, ErrorReason reason);

}  // namespace sealbox::v1

#endif  // SEALBOX_PROTO_SEALBOX_V1_ERROR_REASON_H_
