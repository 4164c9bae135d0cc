#include "server/process/server.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/server_builder.h"
#include "server/log.h"
#include "server/process/storage_from_config.h"
#include "server/process/tls_credentials.h"
#include "server/reflection/reflection_service.h"

namespace sealbox::server {
namespace {

// The transport's cap on any one message, streams' chunks included; also each
// stream's receive window (below).
constexpr int kMaxMessageBytes = 4 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<SealboxServer>> SealboxServer::Start(
    ServerConfig config, const std::vector<grpc::Service*>& extra_services) {
  if (absl::Status s = config.Validate(); !s.ok()) return s;
  std::unique_ptr<SealboxServer> server(new SealboxServer);
  // TLS files first: a bad one stops startup before the keystore is touched.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ListenerCredentials(config);
  if (!credentials.ok()) return credentials.status();

  // The KEK from the HSM (when it is the root of trust) before the keystore it opens.
  if (config.hsm.has_value()) {
    const absl::Duration check_interval = config.hsm->check_interval;
    absl::StatusOr<RootOfTrust> trust = UnsealKek(config);
    if (!trust.ok()) return trust.status();
    server->root_of_trust_ = *std::move(trust);
    server->root_of_trust_.check_interval = check_interval;
  }
  absl::StatusOr<std::unique_ptr<KeystoreStorage>> storage = OpenStorage(config);
  if (!storage.ok()) return storage.status();
  KeystoreOpenOptions open;
  open.create = config.create_keystore;
  // A store that cannot be reached yet (etcd down) is retried in the background:
  // the server listens meanwhile, NOT_SERVING, so probes and callers learn why.
  open.keep_trying = true;
  SealboxServer* s = server.get();
  open.on_writable = [s](bool) { s->UpdateHealth(); };
  open.on_failure = [s](const absl::Status& status) { s->Fail(status); };
  open.min_rotation_period = config.min_rotation_period;
  open.max_staleness = config.max_staleness;
  open.epochs.idle_sweep = config.idle_epoch_sweep;
  absl::StatusOr<std::unique_ptr<Keystore>> keystore =
      Keystore::Open(*std::move(storage), std::move(open));
  if (!keystore.ok()) return keystore.status();
  server->keystore_ = *std::move(keystore);
  server->metrics_.ReadKeystoreWith([k = server->keystore_.get()] { return k->Health(); });
  if (server->keystore_->rewrapped_at_open()) {
    Log("keystore_rewrapped")
        .Add("generation", static_cast<int64_t>(server->keystore_->snapshot()->generation()))
        .Add("detail", "was under --previous-kek-file; now under --kek-file");
  }

  server->auth_limiter_ = std::make_unique<AuthFailureLimiter>(config.auth_limits);
  server->authenticator_ = std::make_unique<Authenticator>(
      config.admin_token, config.cert_tenants, server->auth_limiter_.get(), &server->metrics_,
      server->keystore_.get());
  if (config.audit != AuditLevel::kOff) {
    absl::StatusOr<std::unique_ptr<AuditLog>> audit =
        AuditLog::Open({.path = config.audit_log}, &server->metrics_);
    if (!audit.ok()) return audit.status();
    server->audit_ = *std::move(audit);
  }
  if (server->root_of_trust_.root_key != nullptr) {
    const RootOfTrust& trust = server->root_of_trust_;
    server->metrics_.SetRootKeyUp(true);
    if (trust.created_root_key) {
      server->metrics_.CountCustodyEvent("root_key_created");
      server->AuditCustody("CreateRootKey", absl::OkStatus());
    }
    server->metrics_.CountCustodyEvent(trust.created_kek ? "kek_created" : "kek_unsealed");
    server->AuditCustody(trust.created_kek ? "CreateKek" : "UnsealKek", absl::OkStatus());
  }
  Keystore* keystore_ptr = server->keystore_.get();
  if (server->root_of_trust_.root_key != nullptr) {
    RootOfTrust& trust = server->root_of_trust_;
    custody::KekRotationOptions rotation;
    rotation.period = config.kek_rotation_period;
    rotation.check_interval = trust.check_interval;
    rotation.rewrap_records_per_second = config.kek_rewrap_records_per_second;
    server->kek_rotation_ = std::make_unique<custody::KekRotation>(
        trust.root_key.get(), trust.store.get(), trust.source.get(), keystore_ptr, rotation,
        [s](absl::string_view event, const absl::Status& status, const std::string& fingerprint) {
          s->KekRotationEvent(event, status, fingerprint);
        });
  }
  server->engine_ = std::make_unique<DataPlaneEngine>(
      keystore_ptr->epochs(), config.limits.max_decryption_failures_per_key);
  AuditLog* data_audit = config.audit == AuditLevel::kAll ? server->audit_.get() : nullptr;
  server->data_plane_service_ = std::make_unique<DataPlaneService>(
      keystore_ptr, *server->engine_, server->authenticator_.get(), config.limits,
      &server->metrics_, data_audit);
  server->admin_service_ = std::make_unique<AdminService>(
      server->keystore_.get(), server->authenticator_.get(), &server->metrics_,
      server->audit_.get(), server->kek_rotation_.get());
  if (!config.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsExposer>> exposer =
        MetricsExposer::Start(config.metrics_listen, server->metrics_);
    if (!exposer.ok()) return exposer.status();
    server->exposer_ = *std::move(exposer);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  const bool listens = config.listen != kNoListener;
  if (listens) builder.AddListeningPort(config.listen, *credentials, &server->port_);
  builder.RegisterService(server->data_plane_service_.get());
  builder.RegisterService(server->admin_service_.get());
  // What reflection lists: the API's services registered here and the built-in
  // health; not the caller's extra services.
  std::vector<std::string> served = {v1::Crypto::service_full_name(),
                                     v1::Admin::service_full_name(), "grpc.health.v1.Health"};
  for (grpc::Service* service : extra_services) builder.RegisterService(service);
  absl::StatusOr<std::unique_ptr<Reflection>> reflection = Reflection::Create(std::move(served));
  if (!reflection.ok()) return reflection.status();
  server->reflection_ = *std::move(reflection);
  for (grpc::Service* service : server->reflection_->services()) {
    builder.RegisterService(service);
  }
  // Unary requests are capped by --max-unary-bytes in the service; this is the
  // transport's cap on any one message, streams' chunks included.
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  // Without this, gRPC binds with SO_REUSEPORT and a second server on a busy port
  // starts "successfully" and shares its connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Clients that balance over a headless Service's addresses re-resolve when a
  // connection goes away; closing old ones (GOAWAY; calls in flight finish) is how
  // they find replicas added since. Streams are not cut short: no grace limit.
  if (config.max_connection_age > absl::ZeroDuration()) {
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_MS,
        static_cast<int>(absl::ToInt64Milliseconds(config.max_connection_age)));
  }
  // Many connections, or idle ones, must not exhaust the server: a cap on streams per
  // connection, a deadline for a new connection to start HTTP/2, idle connections
  // closed (GOAWAY), keepalive pings to find dead peers, and a memory quota for
  // gRPC's buffers.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, config.max_streams_per_connection);
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             static_cast<int>(absl::ToInt64Milliseconds(config.handshake_timeout)));
  if (config.max_connection_idle > absl::ZeroDuration()) {
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_IDLE_MS,
        static_cast<int>(absl::ToInt64Milliseconds(config.max_connection_idle)));
  }
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 2 * 60 * 1000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20 * 1000);
  // A fixed receive window per stream instead of gRPC's bandwidth-delay probing. The
  // probe sizes the window by the delay it measures, and on a busy CPU that delay
  // (so the window, so the bytes gRPC buffers per stream) balloons, and with it the
  // server's peak memory under large streams (docs/PERFORMANCE.md, "Batch calls and
  // checksums"). One largest message per round trip still fills a fast link.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kMaxMessageBytes);
  if (config.grpc_memory_limit_bytes > 0) {
    grpc::ResourceQuota quota("sealbox");
    quota.Resize(static_cast<size_t>(config.grpc_memory_limit_bytes));
    builder.SetResourceQuota(quota);
  }
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || (listens && server->port_ == 0)) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config.listen,
                                               " (address in use, or not a valid host:port?)"));
  }
  if (!config.kms.path.empty()) {
    server->kms_service_ = std::make_unique<KmsService>(
        *keystore_ptr, *server->engine_, config.kms.key, server->metrics_, data_audit);
    absl::StatusOr<std::unique_ptr<KmsListener>> kms =
        KmsListener::Start(config.kms, server->kms_service_.get());
    if (!kms.ok()) return kms.status();
    server->kms_listener_ = *std::move(kms);
    Log("kms_listening")
        .Add("socket", config.kms.path)
        .Add("key", absl::StrCat(config.kms.key.tenant, "/", config.kms.key.key));
  }
  server->config_ = std::move(config);
  {
    absl::MutexLock lock(&server->health_mu_);
    server->health_ = server->server_->GetHealthCheckService();
  }
  server->UpdateHealth();
  server->health_watch_ = std::thread([s] { s->WatchHealth(); });
  if (server->root_of_trust_.root_key != nullptr) {
    server->root_key_monitor_ = std::make_unique<custody::RootKeyMonitor>(
        server->root_of_trust_.root_key.get(), server->root_of_trust_.check_interval,
        [s](const absl::Status& status) { s->RootKeyChanged(status); });
  }
  server->rotator_ = std::thread([s] { s->RotateDueKeys(); });
  return server;
}

void SealboxServer::RotateDueKeys() {
  const absl::Duration interval = keystore_->keys().RotationCheckInterval();
  while (!stopping_.WaitForNotificationWithTimeout(interval)) {
    // Only with a loaded, writable keystore: a replica cut off from the store leaves
    // rotation (and the deletion of long-expired tokens) to the others.
    if (keystore_->Writable().ok()) {
      keystore_->keys().RotateDueKeys(absl::Now());
      keystore_->tokens().DeleteExpiredTokens(absl::Now());
    }
  }
}

void SealboxServer::RootKeyChanged(const absl::Status& status) {
  const RootOfTrust& trust = root_of_trust_;
  if (status.ok()) {
    Log("root_key_back").Add("root_key", trust.root_key->Describe());
  } else {
    Log("root_key_lost", "error")
        .Add("root_key", trust.root_key->Describe())
        .Add("error", status.message())
        .Add("detail",
             "still serving from the KEK in memory; a restart would fail until the HSM "
             "key can be used again");
  }
  metrics_.SetRootKeyUp(status.ok());
  metrics_.CountCustodyEvent(status.ok() ? "root_key_back" : "root_key_lost");
  AuditCustody(status.ok() ? "RootKeyBack" : "RootKeyLost", status);
  {
    absl::MutexLock lock(&health_mu_);
    root_key_up_ = status.ok();
  }
  UpdateHealth();
}

void SealboxServer::KekRotationEvent(absl::string_view event, const absl::Status& status,
                                     const std::string& fingerprint) {
  if (status.ok()) {
    Log(event).Add("kek_fingerprint", fingerprint).Add("sealed_kek", root_of_trust_.sealed_kek_at);
  } else {
    Log(event, "error").Add("kek_fingerprint", fingerprint).Add("error", status.message());
  }
  metrics_.CountCustodyEvent(event);
  const absl::string_view method = event == "kek_rotation_started"    ? "KekRotationStarted"
                                   : event == "kek_rotation_finished" ? "KekRotationFinished"
                                                                      : "KekRotationFailed";
  AuditCustody(method, status, fingerprint);
}

void SealboxServer::AuditCustody(absl::string_view method, const absl::Status& status,
                                 const std::string& kek_fingerprint) {
  if (audit_ == nullptr) return;
  AuditRecord record;
  record.time = absl::Now();
  record.service = "sealbox.custody";
  record.method = method;
  record.request_id = audit_->NextRequestId();
  record.code = status.code();
  record.root_key = root_of_trust_.root_key->Describe();
  record.kek_fingerprint =
      kek_fingerprint.empty() ? root_of_trust_.kek_fingerprint : kek_fingerprint;
  audit_->Record(std::move(record));
}

// Health: the whole server ("") and the data plane serve while the keystore may be
// served from (loaded, and current within --max-staleness); the admin plane while
// its store can also be reached. sealbox.RootKey, with an HSM: while its key can be
// used (the rest serves on without it).
void SealboxServer::UpdateHealth() {
  const KeystoreHealth keystore = keystore_->Health();
  const bool serving = keystore.loaded && keystore.fresh;
  absl::MutexLock lock(&health_mu_);
  if (health_ == nullptr || stopping_.HasBeenNotified()) return;
  health_->SetServingStatus("", serving);
  health_->SetServingStatus("sealbox.v1.Crypto", serving);
  health_->SetServingStatus("sealbox.v1.Admin", serving && keystore.reachable);
  if (root_of_trust_.root_key != nullptr) {
    health_->SetServingStatus("sealbox.RootKey", root_key_up_);
  }
}

// Staleness grows with time, not with an event: look again when the bound will pass
// (or within 100 ms, to see a proof that made it current again), and say when the
// replica stops serving for it and when it serves again.
void SealboxServer::WatchHealth() {
  bool was_fresh = true;
  absl::Duration next = absl::Milliseconds(100);
  while (!stopping_.WaitForNotificationWithTimeout(next)) {
    const KeystoreHealth keystore = keystore_->Health();
    next = absl::Milliseconds(100);
    if (keystore.fresh && keystore.max_staleness != absl::InfiniteDuration()) {
      next = std::clamp(keystore.max_staleness - keystore.staleness + absl::Milliseconds(1),
                        absl::Milliseconds(1), next);
    }
    if (!keystore.loaded || keystore.fresh == was_fresh) continue;
    was_fresh = keystore.fresh;
    if (!keystore.fresh) {
      Log("keystore_stale", "error")
          .Add("store", keystore_->Describe())
          .Add("max_staleness", FormatMaxStaleness(keystore.max_staleness))
          .Add("detail",
               "not confirmed current with its store for longer than "
               "--max-staleness: refusing every call until it is");
    } else {
      Log("keystore_current").Add("store", keystore_->Describe());
    }
    UpdateHealth();
  }
}

void SealboxServer::Fail(const absl::Status& status) {
  {
    absl::MutexLock lock(&health_mu_);
    failure_ = status;
  }
  // main() waits for SIGTERM; it finds the failure and exits 1 after the drain.
  kill(getpid(), SIGTERM);
}

absl::Status SealboxServer::failure() const {
  absl::MutexLock lock(&health_mu_);
  return failure_;
}

void SealboxServer::Shutdown() {
  if (server_ == nullptr || stopping_.HasBeenNotified()) return;
  {
    absl::MutexLock lock(&health_mu_);
    stopping_.Notify();
  }
  // Readiness probes see NOT_SERVING while in-flight calls drain.
  server_->GetHealthCheckService()->Shutdown();
  const absl::Time deadline = absl::Now() + config_.drain_timeout;
  if (kms_listener_ != nullptr) kms_listener_->Shutdown(deadline);
  server_->Shutdown(absl::ToChronoTime(deadline));
}

void SealboxServer::Wait() {
  if (server_ == nullptr) return;
  server_->Wait();
}

SealboxServer::~SealboxServer() {
  Shutdown();
  Wait();
  // Their threads call back into this server.
  root_key_monitor_.reset();
  kek_rotation_.reset();
  if (rotator_.joinable()) rotator_.join();
  if (health_watch_.joinable()) health_watch_.join();
  // Its thread calls back into this server: stop it while the server is whole.
  metrics_.ReadKeystoreWith(nullptr);
  keystore_.reset();
}

}  // namespace sealbox::server
