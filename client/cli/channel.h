// The connection to the server: the gRPC channel, and what every call carries.
//
// Transport: TLS when any --tls-* flag is given; otherwise plaintext to a loopback
// address or with --insecure; otherwise TLS verified against the system roots.
#ifndef SEALBOX_CLIENT_CLI_CHANNEL_H_
#define SEALBOX_CLIENT_CLI_CHANNEL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/cli/options.h"
#include "client/cli/outcome.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace sealbox::client {

enum class CallKind {
  kUnary,   // deadline: --timeout, or 30 s
  kStream,  // deadline: --timeout, or none (a stream may run for hours)
};

class Connection {
 public:
  // Reads the TLS files, if any, and creates the channel; it connects on first use.
  static absl::StatusOr<std::unique_ptr<Connection>> Create(const GlobalOptions& options);

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

  // Sets the authorization header and the deadline for one call.
  void Prepare(grpc::ClientContext& context, CallKind kind) const;

  // The outcome of a failed call. A call that timed out without ever reaching the
  // server reads as UNAVAILABLE (exit 6), and UNAVAILABLE names the address. When
  // the server audits calls, the message ends with the call's request id (its
  // `sealbox-request-id` trailer), which the operator finds in the audit log.
  Outcome Failed(absl::string_view what, const grpc::Status& status,
                 const grpc::ClientContext& context) const;

 private:
  Connection(const GlobalOptions& options, std::shared_ptr<grpc::Channel> channel)
      : options_(options), channel_(std::move(channel)) {}

  GlobalOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_CHANNEL_H_
