// How a sealbox command ends: an exit code and, on failure, one line for stderr.
//
// Exit codes (also in `sealbox --help` and client/README.md):
//   0 ok                         4 authentication or permission refused
//   1 server, RPC or local error 5 not found (tenant, key, version, token)
//   2 usage error                6 server unavailable, cannot connect
//   3 decryption failed
#ifndef SEALBOX_CLIENT_CLI_OUTCOME_H_
#define SEALBOX_CLIENT_CLI_OUTCOME_H_

#include <string>

#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace sealbox::client {

enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,
  kExitUsage = 2,
  kExitDecryptionFailed = 3,
  kExitAuth = 4,
  kExitNotFound = 5,
  kExitUnavailable = 6,
};

class Outcome {
 public:
  static Outcome Ok() { return Outcome(kExitOk, ""); }
  // The command line is wrong: a missing flag, a bad value, an unknown command.
  static Outcome Usage(std::string message) { return Outcome(kExitUsage, std::move(message)); }
  // Something local failed: a file, a terminal.
  static Outcome Error(std::string message) { return Outcome(kExitError, std::move(message)); }
  // The input is not something that decrypts, found without asking the server.
  static Outcome DecryptionFailed(std::string message) {
    return Outcome(kExitDecryptionFailed, std::move(message));
  }
  // A failed RPC: "<what>: <CODE_NAME>: <message>", exit code from the status code.
  static Outcome Rpc(absl::string_view what, const grpc::Status& status);

  bool ok() const { return exit_code_ == kExitOk; }
  int exit_code() const { return exit_code_; }
  // One line, without the "sealbox: " prefix.
  const std::string& message() const { return message_; }

 private:
  Outcome(int exit_code, std::string message)
      : exit_code_(exit_code), message_(std::move(message)) {}

  int exit_code_;
  std::string message_;
};

// "UNAVAILABLE", "NOT_FOUND", ... as in the gRPC documentation.
absl::string_view StatusCodeName(grpc::StatusCode code);

// The exit code for a failed RPC.
int ExitCodeFor(const grpc::Status& status);

// `text` with control characters replaced, so a server message stays on one line.
std::string OneLine(absl::string_view text);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_OUTCOME_H_
