#include "client/cli/channel.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "client/cli/input.h"
#include "client/cli/server_address.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace sealbox::client {
namespace {

constexpr double kDefaultUnaryTimeoutSeconds = 30;
// Responses are at most a unary ciphertext or a stream chunk; leave room above both.
constexpr int kMaxReceiveBytes = 32 << 20;
constexpr size_t kMaxPemBytes = 1 << 20;

absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> pem = ReadWholeFile(path, kMaxPemBytes);
  if (!pem.ok()) {
    return absl::Status(pem.status().code(), absl::StrCat(flag, ": ", pem.status().message()));
  }
  return pem;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Connection>> Connection::Create(const GlobalOptions& options) {
  absl::StatusOr<ServerAddress> address = ParseServerAddress(options.server);
  if (!address.ok()) return address.status();

  bool tls_flags =
      !options.tls_ca.empty() || !options.tls_cert.empty() || !options.tls_server_name.empty();
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (!tls_flags && (options.insecure || IsLoopback(*address))) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    absl::StatusOr<std::string> ca = ReadPem("--tls-ca", options.tls_ca);
    if (!ca.ok()) return ca.status();
    absl::StatusOr<std::string> cert = ReadPem("--tls-cert", options.tls_cert);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPem("--tls-key", options.tls_key);
    if (!key.ok()) return key.status();
    ssl.pem_root_certs = *std::move(ca);  // empty: gRPC's default roots
    ssl.pem_cert_chain = *std::move(cert);
    ssl.pem_private_key = *std::move(key);
    credentials = grpc::SslCredentials(ssl);
  }

  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  args.SetUserAgentPrefix("sealbox-cli");
  if (!options.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name);
  }
  auto channel = grpc::CreateCustomChannel(options.server, credentials, args);
  return std::unique_ptr<Connection>(new Connection(options, std::move(channel)));
}

void Connection::Prepare(grpc::ClientContext& context, CallKind kind) const {
  if (!options_.token.empty()) {
    context.AddMetadata("authorization", absl::StrCat("Bearer ", options_.token));
  }
  std::optional<double> seconds = options_.timeout_seconds;
  if (!seconds && kind == CallKind::kUnary) seconds = kDefaultUnaryTimeoutSeconds;
  if (seconds) {
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             std::chrono::duration<double>(*seconds)));
  }
}

namespace {

// The same status, its message ending " (request id ...)" when the server sent one.
grpc::Status WithRequestId(const grpc::Status& status, const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find("sealbox-request-id");
  if (it == trailers.end()) return status;
  return grpc::Status(status.error_code(),
                      absl::StrCat(status.error_message(), " (request id ",
                                   absl::string_view(it->second.data(), it->second.size()), ")"),
                      status.error_details());
}

}  // namespace

Outcome Connection::Failed(absl::string_view what, const grpc::Status& reported,
                           const grpc::ClientContext& context) const {
  const grpc::Status status = WithRequestId(reported, context);
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/false);
    if (state == GRPC_CHANNEL_CONNECTING || state == GRPC_CHANNEL_TRANSIENT_FAILURE) {
      return Outcome::Rpc(what, grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                             absl::StrCat("could not connect to ", options_.server,
                                                          " before the deadline")));
    }
  }
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return Outcome::Rpc(
        what, grpc::Status(status.error_code(), absl::StrCat(status.error_message(), " (server ",
                                                             options_.server, ")")));
  }
  return Outcome::Rpc(what, status);
}

}  // namespace sealbox::client
