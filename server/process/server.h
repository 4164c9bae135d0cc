// The sealbox gRPC server: the data and admin planes, health checking, reflection,
// TLS, keystore reload, and a graceful drain on shutdown.
#ifndef SEALBOX_SERVER_PROCESS_SERVER_H_
#define SEALBOX_SERVER_PROCESS_SERVER_H_

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server.h"
#include "server/admin/admin_service.h"
#include "server/auth/auth.h"
#include "server/custody/kek_rotation.h"
#include "server/custody/root_key_monitor.h"
#include "server/dataplane/data_plane_service.h"
#include "server/engine/data_plane_engine.h"
#include "server/keystore/keystore.h"
#include "server/kms/kms_service.h"
#include "server/kms/kms_socket.h"
#include "server/metrics/exposer.h"
#include "server/metrics/metrics.h"
#include "server/process/root_of_trust.h"
#include "server/process/server_config.h"
#include "server/reflection/reflection_service.h"

namespace sealbox::server {

class SealboxServer {
 public:
  // Loads the keystore and starts listening. Errors name what is wrong (bad flag,
  // wrong KEK, damaged keystore, port in use). `extra_services` are served beside
  // the API (a benchmark's baseline, say) but not listed by reflection; the caller
  // owns them, and they must outlive the server.
  static absl::StatusOr<std::unique_ptr<SealboxServer>> Start(
      ServerConfig config, const std::vector<grpc::Service*>& extra_services = {});

  // The port actually bound (useful with port 0).
  int port() const { return port_; }
  // The metrics port, 0 without --metrics-listen.
  int metrics_port() const { return exposer_ ? exposer_->port() : 0; }
  // The Prometheus text of the server's metrics.
  std::string RenderMetrics() const { return metrics_.Render(); }

  // Opens the audit log's file afresh (SIGHUP, after logrotate renamed it).
  void ReopenAuditLog() {
    if (audit_ != nullptr) audit_->Reopen();
  }

  // Stops accepting calls, lets in-flight ones finish for up to the drain timeout,
  // then cancels the rest. Safe to call once, from any thread.
  void Shutdown();

  // Blocks until Shutdown() has completed.
  void Wait();

  // Why the server gave up after starting (the keystore failed to load for good,
  // e.g. a wrong KEK once etcd answered), or OK. It then sends itself SIGTERM.
  absl::Status failure() const;

  ~SealboxServer();

 private:
  SealboxServer() = default;
  void UpdateHealth();
  // The health_watch_ thread: UpdateHealth when the keystore goes stale or current.
  void WatchHealth();
  void Fail(const absl::Status& status);
  // The rotator_ thread: Keystore::RotateDueKeys and DeleteExpiredTokens every
  // RotationCheckInterval.
  void RotateDueKeys();
  // From the root key's watch (server/custody/root_key_monitor.h): each change is
  // logged, audited, counted, and shown in health (sealbox.RootKey) and metrics.
  void RootKeyChanged(const absl::Status& status);
  // An audit line for a custody event (service "sealbox.custody").
  void AuditCustody(absl::string_view method, const absl::Status& status,
                    const std::string& kek_fingerprint = "");
  // From the KEK rotation: logged, audited and counted.
  void KekRotationEvent(absl::string_view event, const absl::Status& status,
                        const std::string& fingerprint);

  ServerConfig config_;
  RootOfTrust root_of_trust_;  // no root_key: the KEK was given (--kek-file)
  std::unique_ptr<Keystore> keystore_;
  Metrics metrics_;
  std::unique_ptr<AuthFailureLimiter> auth_limiter_;
  // Before the services, so it outlives their last call.
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<MetricsExposer> exposer_;
  std::unique_ptr<Authenticator> authenticator_;
  // Shared by the data plane and the KMS socket: one per-key decryption-failure count.
  std::unique_ptr<DataPlaneEngine> engine_;
  std::unique_ptr<DataPlaneService> data_plane_service_;
  std::unique_ptr<AdminService> admin_service_;
  std::unique_ptr<KmsService> kms_service_;
  std::unique_ptr<KmsListener> kms_listener_;
  std::unique_ptr<Reflection> reflection_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  absl::Notification stopping_;
  mutable absl::Mutex health_mu_;
  grpc::HealthCheckServiceInterface* health_ ABSL_GUARDED_BY(health_mu_) = nullptr;
  absl::Status failure_ ABSL_GUARDED_BY(health_mu_);
  std::thread rotator_;
  std::thread health_watch_;
  bool root_key_up_ ABSL_GUARDED_BY(health_mu_) = true;
  std::unique_ptr<custody::RootKeyMonitor> root_key_monitor_;
  // With a root key: KEK rotation while serving. Before the admin service, which
  // calls it; stopped before the keystore goes.
  std::unique_ptr<custody::KekRotation> kek_rotation_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_SERVER_H_
