#include "server/grpc_status.h"

#include <string>

namespace sealbox::server {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // Messages are ours (never key material or plaintext); the cap keeps a runaway
  // message from bloating trailers.
  constexpr size_t kMaxMessageBytes = 512;
  std::string message(status.message().substr(0, kMaxMessageBytes));
  // absl and gRPC share the canonical code numbering.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message);
}

}  // namespace sealbox::server
