#include "server/server.h"

#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/server_builder.h"
#include "server/log.h"
#include "server/bench/echo_service.h"
#include "server/tls_credentials.h"

namespace sealbox::server {

absl::StatusOr<std::unique_ptr<SealboxServer>> SealboxServer::Start(
    ServerConfig config) {
  if (absl::Status s = config.Validate(); !s.ok()) return s;
  std::unique_ptr<SealboxServer> server(new SealboxServer);
  // TLS files first: a bad one stops startup before the keystore is touched.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ListenerCredentials(config);
  if (!credentials.ok()) return credentials.status();

  KeystoreOptions keystore_options;
  keystore_options.data_dir = config.data_dir;
  keystore_options.kek = config.kek.Clone();
  keystore_options.previous_kek = config.previous_kek.Clone();
  keystore_options.create_if_missing = config.create_keystore;
  absl::StatusOr<std::unique_ptr<Keystore>> keystore =
      Keystore::Open(std::move(keystore_options));
  if (!keystore.ok()) return keystore.status();
  server->keystore_ = *std::move(keystore);
  if (server->keystore_->rewrapped_at_open()) {
    Log("keystore_rewrapped")
        .Add("generation", static_cast<int64_t>(server->keystore_->snapshot()->generation()))
        .Add("detail", "was under --previous-kek-file; now under --kek-file");
  }

  server->auth_limiter_ = std::make_unique<AuthFailureLimiter>(config.auth_limits);
  server->authenticator_ = std::make_unique<Authenticator>(
      config.admin_token, config.cert_tenants, server->auth_limiter_.get(),
      &server->metrics_);
  server->crypto_service_ = std::make_unique<CryptoService>(
      server->keystore_.get(), server->authenticator_.get(), config.limits,
      &server->metrics_);
  server->admin_service_ = std::make_unique<AdminService>(
      server->keystore_.get(), server->authenticator_.get(), &server->metrics_);
  if (!config.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<HttpExporter>> exporter =
        HttpExporter::Start(config.metrics_listen, &server->metrics_);
    if (!exporter.ok()) return exporter.status();
    server->exporter_ = *std::move(exporter);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, *credentials, &server->port_);
  builder.RegisterService(server->crypto_service_.get());
  builder.RegisterService(server->admin_service_.get());
  if (config.bench_echo) {
    server->bench_echo_service_ = std::make_unique<bench::EchoService>();
    builder.RegisterService(server->bench_echo_service_.get());
  }
  // Unary requests are capped by --max-unary-bytes in the service; this is the
  // transport's cap on any one message, streams' chunks included.
  builder.SetMaxReceiveMessageSize(4 << 20);
  builder.SetMaxSendMessageSize(4 << 20);
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
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             config.max_streams_per_connection);
  builder.AddChannelArgument(
      GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
      static_cast<int>(absl::ToInt64Milliseconds(config.handshake_timeout)));
  if (config.max_connection_idle > absl::ZeroDuration()) {
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_IDLE_MS,
        static_cast<int>(absl::ToInt64Milliseconds(config.max_connection_idle)));
  }
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 2 * 60 * 1000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20 * 1000);
  if (config.grpc_memory_limit_bytes > 0) {
    grpc::ResourceQuota quota("sealbox");
    quota.Resize(static_cast<size_t>(config.grpc_memory_limit_bytes));
    builder.SetResourceQuota(quota);
  }
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", config.listen,
                     " (address in use, or not a valid host:port?)"));
  }
  // Health: the whole server ("") and each service by name.
  grpc::HealthCheckServiceInterface* health = server->server_->GetHealthCheckService();
  for (const char* service : {"sealbox.v1.Crypto", "sealbox.v1.Admin"}) {
    health->SetServingStatus(service, true);
  }
  server->config_ = std::move(config);
  server->watcher_ = std::thread([s = server.get()] { s->WatchKeystore(); });
  return server;
}

void SealboxServer::WatchKeystore() {
  // Replicas sharing the keystore file pick up each other's admin changes here.
  while (!stopping_.WaitForNotificationWithTimeout(config_.reload_interval)) {
    const uint64_t before = keystore_->snapshot()->generation();
    if (absl::Status s = keystore_->ReloadIfChanged(); !s.ok()) {
      Log("keystore_reload_failed", "error")
          .Add("error", s.message())
          .Add("serving_generation", static_cast<int64_t>(before));
    } else if (keystore_->snapshot()->generation() != before) {
      Log("keystore_reloaded")
          .Add("generation", static_cast<int64_t>(keystore_->snapshot()->generation()));
    }
  }
}

void SealboxServer::Shutdown() {
  if (server_ == nullptr || stopping_.HasBeenNotified()) return;
  stopping_.Notify();
  // Readiness probes see NOT_SERVING while in-flight calls drain.
  server_->GetHealthCheckService()->Shutdown();
  const auto deadline =
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(absl::ToInt64Milliseconds(config_.drain_timeout));
  server_->Shutdown(deadline);
}

void SealboxServer::Wait() {
  if (server_ == nullptr) return;
  server_->Wait();
  if (watcher_.joinable()) watcher_.join();
}

SealboxServer::~SealboxServer() {
  Shutdown();
  Wait();
}

}  // namespace sealbox::server
