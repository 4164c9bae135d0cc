// Serves Metrics::Render() at GET /metrics over plain HTTP/1.1, for Prometheus.
// Deliberately tiny: one thread, one request per connection, nothing else served.
#ifndef SEALBOX_SERVER_METRICS_HTTP_EXPORTER_H_
#define SEALBOX_SERVER_METRICS_HTTP_EXPORTER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

class HttpExporter {
 public:
  // Listens on `host_port` ("127.0.0.1:9090", port 0 picks one).
  static absl::StatusOr<std::unique_ptr<HttpExporter>> Start(const std::string& host_port,
                                                             const Metrics* metrics);
  int port() const { return port_; }
  ~HttpExporter();

 private:
  HttpExporter() = default;
  void Serve();

  const Metrics* metrics_ = nullptr;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_METRICS_HTTP_EXPORTER_H_
