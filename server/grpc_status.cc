#include "server/grpc_status.h"

#include <string>

#include "crypto/decryption_failure.h"
#include "proto/sealbox/v1/error_reason.h"

namespace sealbox::server {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // Messages are ours (never key material or plaintext); the cap keeps a runaway
  // message from bloating trailers.
  constexpr size_t kMaxMessageBytes = 512;
  std::string message(status.message().substr(0, kMaxMessageBytes));
  // absl and gRPC share the canonical code numbering.
  const auto code = static_cast<grpc::StatusCode>(status.code());
  if (crypto::IsDecryptionFailure(status)) {
    return v1::StatusWithReason(code, message, v1::DECRYPTION_FAILED);
  }
  return grpc::Status(code, message);
}

}  // namespace sealbox::server
