// Serves Metrics at GET /metrics over plain HTTP, for Prometheus: prometheus-cpp's
// Exposer (civetweb) on the --metrics-listen address, which also adds its own
// exposer_* series. Paths outside /metrics answer 404 (civetweb matches by
// prefix, so /metrics/x is /metrics).
#ifndef SEALBOX_SERVER_METRICS_EXPOSER_H_
#define SEALBOX_SERVER_METRICS_EXPOSER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "prometheus/exposer.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

class MetricsExposer {
 public:
  // Listens on `host_port` ("127.0.0.1:9090"; port 0 picks one; an empty host means
  // every IPv4 address). Debian's civetweb is built without IPv6, so an IPv6
  // address is refused with a message saying so.
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(const std::string& host_port,
                                                               const Metrics& metrics);
  int port() const { return port_; }

  // Stops serving within milliseconds (see WakeListener).
  ~MetricsExposer();

 private:
  MetricsExposer() = default;

  // civetweb's shutdown waits for its listening thread, which looks at its stop
  // flag only between polls of up to 2 s (SOCKET_TIMEOUT_QUANTUM): every server
  // stop took two seconds. A connection to the listener ends that poll at once.
  void WakeListener() const;

  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string wake_address_;  // IPv4, where WakeListener connects
  int port_ = 0;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_METRICS_EXPOSER_H_
