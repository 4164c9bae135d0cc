#include "client/cli/server_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sealbox::client {

absl::StatusOr<ServerAddress> ParseServerAddress(absl::string_view server) {
  ServerAddress address;
  if (absl::StartsWith(server, "unix:")) {
    if (server.size() == 5) return absl::InvalidArgumentError("unix: needs a socket path");
    address.unix_socket = true;
    return address;
  }
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("server address '", server, "' is not HOST:PORT, [IPV6]:PORT or unix:PATH"));
  };
  size_t colon = server.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return bad();
  absl::string_view host = server.substr(0, colon);
  absl::string_view port = server.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return bad();
    host = host.substr(1, host.size() - 2);
  } else if (absl::StrContains(host, ':')) {
    return bad();  // an IPv6 address needs brackets
  }
  if (port.empty() || port.size() > 5) return bad();
  for (char c : port) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return bad();
  }
  address.host = std::string(host);
  address.port = std::string(port);
  return address;
}

bool IsLoopback(const ServerAddress& address) {
  if (address.unix_socket) return true;
  std::string host = absl::AsciiStrToLower(address.host);
  if (host == "localhost" || absl::EndsWith(host, ".localhost")) return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace sealbox::client
