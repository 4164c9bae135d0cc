#include "server/metrics/exposer.h"

#include <netdb.h>
#include <sys/socket.h>

#include <exception>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "civetweb.h"

namespace sealbox::server {
namespace {

// civetweb takes numeric addresses only: the host's first address, as text.
absl::StatusOr<std::string> NumericHost(const std::string& host) {
  // mg_check_feature(8): civetweb built with IPv6 (Debian 12's is not).
  const bool ipv6 = mg_check_feature(8) != 0;
  addrinfo hints{};
  hints.ai_family = ipv6 ? AF_UNSPEC : AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), "0", &hints, &found) != 0 ||
      found == nullptr) {
    if (!ipv6 && host.find(':') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--metrics-listen: \"", host,
                       "\" is IPv6, and the metrics server (civetweb) "
                       "here is built for IPv4 only; use an IPv4 address"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen: cannot resolve \"", host, "\""));
  }
  char text[NI_MAXHOST] = {};
  const int failed = getnameinfo(found->ai_addr, found->ai_addrlen, text, sizeof(text), nullptr, 0,
                                 NI_NUMERICHOST);
  const bool v6 = found->ai_family == AF_INET6;
  freeaddrinfo(found);
  if (failed != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen: cannot resolve \"", host, "\""));
  }
  return v6 ? absl::StrCat("[", text, "]") : std::string(text);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(const std::string& host_port,
                                                                      const Metrics& metrics) {
  const size_t colon = host_port.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(host_port.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen: expected host:port, got \"", host_port, "\""));
  }
  std::string host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  absl::StatusOr<std::string> address = NumericHost(host);
  if (!address.ok()) return address.status();

  std::unique_ptr<MetricsExposer> exposer(new MetricsExposer);
  try {
    // Two threads serve scrapes; a slow client is cut off after 2 s, so it cannot
    // hold them. No keep-alive (civetweb's default): one request per connection.
    exposer->exposer_ = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", absl::StrCat(*address, ":", port),
                                 "num_threads", "2", "request_timeout_ms", "2000"});
  } catch (const std::exception&) {
    // civetweb says only "null context"; the usual cause is the port.
    return absl::UnavailableError(
        absl::StrCat("--metrics-listen: cannot listen on ", host_port,
                     " (address in use, or not an address of this machine?)"));
  }
  for (const std::shared_ptr<prometheus::Collectable>& collectable : metrics.collectables()) {
    exposer->exposer_->RegisterCollectable(collectable);
  }
  const std::vector<int> ports = exposer->exposer_->GetListeningPorts();
  exposer->port_ = ports.empty() ? port : ports.front();
  return exposer;
}

}  // namespace sealbox::server
