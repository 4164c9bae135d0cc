#include "server/grpc_status.h"

#include <string>

#include "crypto/decryption_failure.h"
#include "proto/sealbox/v1/error_reason.h"

namespace sealbox::server {

namespace {

// Messages are ours (never key material or plaintext); the cap keeps a runaway
// message from bloating trailers.
std::string BoundedMessage(const absl::Status& status) {
  constexpr size_t kMaxMessageBytes = 512;
  return std::string(status.message().substr(0, kMaxMessageBytes));
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  std::string message = BoundedMessage(status);
  // absl and gRPC share the canonical code numbering.
  const auto code = static_cast<grpc::StatusCode>(status.code());
  if (crypto::IsDecryptionFailure(status)) {
    return v1::StatusWithReason(code, message, v1::DECRYPTION_FAILED);
  }
  return grpc::Status(code, message);
}

v1::ItemError ToItemError(const absl::Status& status) {
  v1::ItemError error;
  error.set_code(static_cast<int>(status.code()));
  error.set_message(BoundedMessage(status));
  if (crypto::IsDecryptionFailure(status)) error.set_reason(v1::DECRYPTION_FAILED);
  return error;
}

}  // namespace sealbox::server
