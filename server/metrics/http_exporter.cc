#include "server/metrics/http_exporter.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace sealbox::server {

absl::StatusOr<std::unique_ptr<HttpExporter>> HttpExporter::Start(
    const std::string& host_port, const Metrics* metrics) {
  const size_t colon = host_port.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(host_port.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen: expected host:port, got \"", host_port, "\""));
  }
  std::string host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(port);
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints,
                  &found) != 0 || found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen: cannot resolve \"", host, "\""));
  }
  std::unique_ptr<HttpExporter> exporter(new HttpExporter);
  exporter->metrics_ = metrics;
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool bound = fd >= 0 && bind(fd, found->ai_addr, found->ai_addrlen) == 0 &&
                     listen(fd, 16) == 0;
  freeaddrinfo(found);
  if (!bound) {
    if (fd >= 0) close(fd);
    return absl::UnavailableError(
        absl::StrCat("--metrics-listen: cannot listen on ", host_port, ": ",
                     std::strerror(errno)));
  }
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  exporter->port_ = ntohs(address.ss_family == AF_INET6
                              ? reinterpret_cast<sockaddr_in6*>(&address)->sin6_port
                              : reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  exporter->listen_fd_ = fd;
  exporter->thread_ = std::thread([e = exporter.get()] { e->Serve(); });
  return exporter;
}

void HttpExporter::Serve() {
  while (!stopping_.load()) {
    pollfd waiting{listen_fd_, POLLIN, 0};
    if (poll(&waiting, 1, 200) <= 0) continue;  // wakes to notice stopping_
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    timeval timeout{2, 0};  // a slow client cannot hold the exporter
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    char request[2048];
    ssize_t n = recv(client, request, sizeof(request) - 1, 0);
    std::string response;
    if (n > 0 && absl::StartsWith(absl::string_view(request, n), "GET /metrics")) {
      std::string body = metrics_->Render();
      response = absl::StrCat(
          "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
          "Content-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
    } else {
      response =
          "HTTP/1.1 404 Not Found\r\nContent-Length: 20\r\nConnection: close\r\n\r\n"
          "try GET /metrics\r\n\r\n";
    }
    for (size_t sent = 0; sent < response.size();) {
      ssize_t w = send(client, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
      if (w <= 0) break;
      sent += static_cast<size_t>(w);
    }
    close(client);
  }
}

HttpExporter::~HttpExporter() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

}  // namespace sealbox::server
