#include "proto/sealbox/v1/error_reason.h"

#include <string>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace sealbox::v1 {
namespace {

const std::string& Domain() { return ErrorReason_descriptor()->file()->package(); }

}  // namespace

grpc::Status StatusWithReason(grpc::StatusCode code, const std::string& message,
                              ErrorReason reason) {
  google::rpc::ErrorInfo info;
  info.set_reason(ErrorReason_Name(reason));
  info.set_domain(Domain());
  google::rpc::Status details;
  details.set_code(code);
  details.set_message(message);
  details.add_details()->PackFrom(info);
  return grpc::Status(code, message, details.SerializeAsString());
}

bool HasReason(const grpc::Status& status, ErrorReason reason) {
  google::rpc::Status details;
  if (status.error_details().empty() || !details.ParseFromString(status.error_details())) {
    return false;
  }
  for (const google::protobuf::Any& detail : details.details()) {
    google::rpc::ErrorInfo info;
    if (detail.UnpackTo(&info) && info.domain() == Domain() &&
        info.reason() == ErrorReason_Name(reason)) {
      return true;
    }
  }
  return false;
}

}  // namespace sealbox::v1
