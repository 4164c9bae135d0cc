#ifndef SEALBOX_SERVER_PROCESS_SERVER_CONFIG_H_
#define SEALBOX_SERVER_PROCESS_SERVER_CONFIG_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/audit/audit_log.h"
#include "server/auth/auth_limiter.h"
#include "server/custody/pkcs11_root_key.h"
#include "server/dataplane/data_plane_limits.h"
#include "server/keystore/etcd/etcd_options.h"
#include "server/keystore/kek.h"
#include "server/keystore/kek_ring.h"
#include "server/kms/kms_socket.h"

namespace sealbox::server {

// Everything the server needs, resolved from flags (run_server.cc) or by dev mode.
struct ServerConfig {
  std::string listen = "127.0.0.1:50051";  // kNoListener: only the KMS socket

  // Where the keystore is kept: a data directory (the file backend), or etcd
  // (etcd.endpoints not empty) under etcd_prefix. Exactly one.
  std::string data_dir;
  etcd::EtcdOptions etcd;
  std::string etcd_prefix = "/sealbox/";
  // The KEK: given (--kek-file, SEALBOX_KEK: development), or sealed by the HSM key
  // `hsm` names and unsealed by SealboxServer::Start (server/process/root_of_trust.h).
  std::optional<Kek> kek;
  std::optional<custody::HsmOptions> hsm;
  // What Start makes of `hsm`: the KEKs unsealed, and where newer ones come from.
  std::shared_ptr<const KekRing> keks;
  KekSource* kek_source = nullptr;
  // KEK rotation while serving (server/custody/kek_rotation.h), with `hsm` only:
  // --kek-rotation-period (zero: only when asked) and --kek-rewrap-rate.
  absl::Duration kek_rotation_period = absl::ZeroDuration();
  double kek_rewrap_records_per_second = 0;
  std::optional<Kek> previous_kek;  // set only while the KEK is changed
  std::string admin_token;          // empty: admin plane unusable
  // TLS: PEM files, re-read every tls_reload_interval (server/process/tls_credentials.h).
  // Client CA set: clients must present a certificate it signed.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string client_ca_file;
  absl::Duration tls_reload_interval = absl::Seconds(30);
  // How often idle keys' sealing epochs are dropped (crypto/format/epochs.h,
  // Epochs::DropIdle): one unused for two periods is gone. Zero: never.
  absl::Duration idle_epoch_sweep = absl::Minutes(5);
  // The shortest rotation period a key may be given (SetRotationPeriod).
  absl::Duration min_rotation_period = absl::Hours(1);
  std::map<std::string, std::string> cert_tenants;  // certificate CN -> tenant
  bool allow_insecure_listen = false;
  std::string metrics_listen;  // host:port for Prometheus; empty: no exporter
  // The Kubernetes KMS v2 API on a unix socket (server/kms/); path empty: none.
  KmsSocketOptions kms;
  // Which requests get an audit line (server/audit/audit_log.h), and where: a file,
  // or "-" for standard error.
  AuditLevel audit = AuditLevel::kOff;
  std::string audit_log = "-";
  bool create_keystore = false;
  DataPlaneLimits limits;
  absl::Duration drain_timeout = absl::Seconds(20);
  // How often the file backend reads its file: its heartbeat.
  absl::Duration reload_interval = absl::Seconds(1);
  // How long a replica may serve without proving its keystore current with the store
  // (server/keystore/freshness.h); absl::InfiniteDuration(): unbounded.
  absl::Duration max_staleness = absl::Seconds(30);
  absl::Duration max_connection_age = absl::ZeroDuration();  // zero: connections never age
  // Failed authentication per caller address (server/auth/auth_limiter.h).
  AuthLimits auth_limits;
  // Transport limits against many or idle connections: streams one connection may
  // have open at once, how long a connection without calls stays open (zero: no
  // limit), how long a new connection may take to start HTTP/2 (TLS included), and
  // gRPC's memory quota for its buffers (0: none).
  int max_streams_per_connection = 100;
  absl::Duration max_connection_idle = absl::Minutes(5);
  absl::Duration handshake_timeout = absl::Seconds(10);
  int64_t grpc_memory_limit_bytes = int64_t{1} << 30;

  bool tls() const { return !tls_cert_file.empty(); }
  bool uses_etcd() const { return !etcd.endpoints.empty(); }

  // Refuses unsafe or inconsistent settings with a message naming the flag.
  absl::Status Validate() const;

  // How often the etcd backend proves the keystore current: a tenth of the bound,
  // between 100 and 250 ms (a linearizable read each, which etcd serves without a
  // write; frequent, so that a cut is noticed, and healed, soon).
  absl::Duration EtcdHeartbeat() const;
};

// "30s", "2m", "500ms" (Go's duration syntax) or "unbounded": --max-staleness.
absl::StatusOr<absl::Duration> ParseMaxStaleness(const std::string& text);

// --listen's value for no TCP (or unix) gRPC listener: a control-plane node's KMS
// plugin that serves only --kms-socket, its keystore administered elsewhere.
inline constexpr char kNoListener[] = "none";

// True for 127.0.0.0/8, [::1], "localhost" and unix: socket listen addresses.
bool IsLoopbackAddress(const std::string& host_port);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_SERVER_CONFIG_H_
