#include "server/metrics/exposer.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <exception>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
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
  exposer->wake_address_ = *address == "0.0.0.0" ? "127.0.0.1" : *address;
  return exposer;
}

void MetricsExposer::WakeListener() const {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port_));
  if (inet_pton(AF_INET, wake_address_.c_str(), &to.sin_addr) != 1) return;  // IPv6: wait
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  // Refused once the listener is closed: that is the shutdown done, not an error.
  connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
  close(fd);
}

MetricsExposer::~MetricsExposer() {
  if (exposer_ == nullptr) return;
  // Again until the shutdown is over: a connection that arrives before civetweb
  // has raised its stop flag is served as an ordinary (empty) request.
  std::atomic<bool> stopped{false};
  std::thread waker([this, &stopped] {
    for (int i = 0; i < 300 && !stopped.load(); ++i) {
      WakeListener();
      absl::SleepFor(absl::Milliseconds(10));
    }
  });
  exposer_.reset();
  stopped = true;
  waker.join();
}

}  // namespace sealbox::server
