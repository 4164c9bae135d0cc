// The --server value: HOST:PORT, [IPV6]:PORT or unix:PATH.
#ifndef SEALBOX_CLIENT_CLI_SERVER_ADDRESS_H_
#define SEALBOX_CLIENT_CLI_SERVER_ADDRESS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sealbox::client {

struct ServerAddress {
  std::string host;  // without brackets; empty for unix:
  std::string port;
  bool unix_socket = false;
};

// INVALID_ARGUMENT, with a message for the user, unless `server` is one of the forms above.
absl::StatusOr<ServerAddress> ParseServerAddress(absl::string_view server);

// True for traffic that never leaves the machine: localhost, 127.0.0.0/8, ::1 and
// unix sockets. Only these are reached in plaintext without --insecure.
bool IsLoopback(const ServerAddress& address);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_SERVER_ADDRESS_H_
