#include "server/process/server_config.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sealbox::server {

bool IsLoopbackAddress(const std::string& host_port) {
  // A unix socket is reachable only through the file system, like loopback.
  return absl::StartsWith(host_port, "unix:") || absl::StartsWith(host_port, "127.") ||
         absl::StartsWith(host_port, "localhost:") || absl::StartsWith(host_port, "[::1]:");
}

absl::Status ServerConfig::Validate() const {
  if (data_dir.empty() && !uses_etcd()) {
    return absl::InvalidArgumentError(
        "say where the keystore is: --data-dir (a file) or --etcd-endpoints");
  }
  if (!data_dir.empty() && uses_etcd()) {
    return absl::InvalidArgumentError(
        "--data-dir and --etcd-endpoints name two keystores: give one (both only with "
        "--migrate-keystore or --export-keystore)");
  }
  // A Kek's length was checked when it was made (Kek::FromBytes).
  if (kek_rotation_period > absl::ZeroDuration() && !hsm.has_value()) {
    return absl::InvalidArgumentError(
        "--kek-rotation-period needs the KEK sealed by an HSM (--hsm-module)");
  }
  if (kek_rotation_period > absl::ZeroDuration() && kek_rotation_period < min_rotation_period) {
    return absl::InvalidArgumentError(
        absl::StrCat("--kek-rotation-period is shorter than --min-rotation-period-seconds (",
                     absl::ToInt64Seconds(min_rotation_period), " s)"));
  }
  if (kek.has_value() == hsm.has_value()) {
    return absl::InvalidArgumentError(kek.has_value()
                                          ? "a KEK and an HSM to seal one: give one of them"
                                          : "no KEK: give --hsm-module, --kek-file or SEALBOX_KEK");
  }
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!client_ca_file.empty() && !tls()) {
    return absl::InvalidArgumentError("--client-ca needs --tls-cert and --tls-key");
  }
  if (listen == kNoListener && kms.path.empty()) {
    return absl::InvalidArgumentError(
        "--listen=none serves nothing without --kms-socket (give one, or an address)");
  }
  if (!tls() && listen != kNoListener && !IsLoopbackAddress(listen) && !allow_insecure_listen) {
    return absl::InvalidArgumentError(
        absl::StrCat("refusing to serve plaintext gRPC on non-loopback address ", listen,
                     ": give --tls-cert/--tls-key, or --allow-insecure-listen if a proxy "
                     "terminates TLS in front of sealbox"));
  }
  // sockaddr_un holds 108 bytes, the terminating NUL included.
  if (absl::StartsWith(listen, "unix:") && listen.size() - 5 > 107) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen: the unix socket path is ", listen.size() - 5,
                     " bytes long; the system allows 107 (choose a shorter path)"));
  }
  if (limits.max_unary_bytes == 0 || limits.max_unary_bytes > (4u << 20) - 1024) {
    return absl::InvalidArgumentError(
        "--max-unary-bytes must be between 1 and 4 MiB - 1 KiB (gRPC's message limit)");
  }
  if (limits.max_concurrent_streams < 1) {
    return absl::InvalidArgumentError("--max-streams must be at least 1");
  }
  if (tls_reload_interval < absl::Seconds(1)) {
    return absl::InvalidArgumentError("--tls-reload-seconds must be at least 1");
  }
  if (idle_epoch_sweep < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--idle-epoch-seconds must be 0 (never) or more");
  }
  // gRPC takes the age in milliseconds as an int.
  if (max_connection_age < absl::ZeroDuration() || max_connection_age > absl::Hours(24 * 24)) {
    return absl::InvalidArgumentError(
        "--max-connection-age-seconds must be between 0 (never) and 24 days");
  }
  if (limits.stream_idle_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--stream-idle-seconds must be 0 (never) or more");
  }
  if (auth_limits.max_failures < 0) {
    return absl::InvalidArgumentError("--auth-failures-per-minute must be 0 (off) or more");
  }
  if (max_streams_per_connection < 1) {
    return absl::InvalidArgumentError("--max-streams-per-connection must be at least 1");
  }
  if (max_connection_idle < absl::ZeroDuration() || max_connection_idle > absl::Hours(24 * 24)) {
    return absl::InvalidArgumentError(
        "--max-connection-idle-seconds must be between 0 (never) and 24 days");
  }
  if (handshake_timeout < absl::Seconds(1) || handshake_timeout > absl::Hours(1)) {
    return absl::InvalidArgumentError("--handshake-timeout-seconds must be between 1 and 3600");
  }
  if (grpc_memory_limit_bytes != 0 && grpc_memory_limit_bytes < (int64_t{64} << 20)) {
    return absl::InvalidArgumentError("--grpc-memory-limit-mb must be 0 (no limit) or at least 64");
  }
  // Room for a heartbeat that fails once (its read waits up to a second) and the
  // next that succeeds; the file backend reads its file every reload_interval.
  const absl::Duration least =
      uses_etcd() ? absl::Seconds(2) : std::max(absl::Seconds(2), 2 * reload_interval);
  if (max_staleness < least) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-staleness must be at least ", absl::FormatDuration(least), " (or \"unbounded\")"));
  }
  return absl::OkStatus();
}

absl::Duration ServerConfig::EtcdHeartbeat() const {
  if (max_staleness == absl::InfiniteDuration()) return absl::Milliseconds(250);
  return std::clamp(max_staleness / 10, absl::Milliseconds(100), absl::Milliseconds(250));
}

absl::StatusOr<absl::Duration> ParseMaxStaleness(const std::string& text) {
  if (text == "unbounded") return absl::InfiniteDuration();
  absl::Duration bound;
  if (!absl::ParseDuration(text, &bound) || bound <= absl::ZeroDuration() ||
      bound == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-staleness: \"", text,
                     "\" is not a duration such as 30s, 2m or 500ms, nor \"unbounded\""));
  }
  return bound;
}

}  // namespace sealbox::server
