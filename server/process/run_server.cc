// sealbox-server: flags in, SealboxServer out (RunServer, run_server.h). Everything
// else lives in server.cc.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "crypto/aes_gcm.h"
#include "crypto/secret/secure_wipe.h"
#include "server/custody/pkcs11_root_key.h"
#include "server/log.h"
#include "server/process/dev_mode.h"
#include "server/process/flag_file.h"
#include "server/process/keystore_transfer.h"
#include "server/process/malloc_tuning.h"
#include "server/process/process_hardening.h"
#include "server/process/run_server.h"
#include "server/process/server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "host:port for gRPC. Non-loopback addresses need TLS (or "
          "--allow-insecure-listen). \"none\": no gRPC listener, only --kms-socket.");
ABSL_FLAG(std::string, data_dir, "",
          "Directory holding keystore.sbx: the keystore in one file (one replica, or "
          "replicas sharing a volume). Or --etcd-endpoints.");
ABSL_FLAG(std::vector<std::string>, etcd_endpoints, {},
          "Comma-separated HOST:PORT (or http(s)://HOST:PORT) of etcd members: the "
          "keystore in etcd, shared by every replica pointed at it. Instead of --data-dir.");
ABSL_FLAG(std::string, etcd_prefix, "/sealbox/",
          "The etcd key prefix the keystore lives under; one keystore per prefix.");
ABSL_FLAG(std::string, etcd_ca, "",
          "PEM CA bundle to verify etcd's server certificates (TLS to etcd).");
ABSL_FLAG(std::string, etcd_cert, "",
          "PEM client certificate for etcd (--client-cert-auth), with --etcd-key.");
ABSL_FLAG(std::string, etcd_key, "",
          "PEM private key for --etcd-cert. --etcd-ca, --etcd-cert and --etcd-key are "
          "read again every --tls-reload-seconds: renewed files serve new connections "
          "to etcd without a restart.");
ABSL_FLAG(std::string, etcd_user, "",
          "etcd user (etcd auth enabled); its password from --etcd-password-file or the "
          "environment variable SEALBOX_ETCD_PASSWORD, never a flag.");
ABSL_FLAG(std::string, etcd_password_file, "",
          "File with the password of --etcd-user, read again at each login to etcd, so "
          "a changed password is used without a restart.");
ABSL_FLAG(bool, migrate_keystore, false,
          "Copy the file keystore in --data-dir into the empty --etcd-prefix of "
          "--etcd-endpoints, read it back to verify, and exit (0 when verified).");
ABSL_FLAG(bool, export_keystore, false,
          "Write the etcd keystore as a new file keystore in --data-dir (a backup the "
          "file backend can serve), read it back to verify, and exit.");
ABSL_FLAG(std::string, kek_file, "",
          "For development and tests: file with the 32-byte key-encryption key (raw, or "
          "64 hex digits). Alternatively the environment variable SEALBOX_KEK (64 hex "
          "digits). Whoever copies it and the keystore has every key: in production, "
          "seal the KEK with an HSM instead (--hsm-module).");
ABSL_FLAG(std::string, hsm_module, "",
          "The root of trust: the HSM vendor's PKCS#11 library (SoftHSM2, CloudHSM, "
          "Luna, YubiHSM 2, Thales). The KEK is then kept only sealed by an HSM key, "
          "beside the keystore (<data-dir>/kek.sealed, or <etcd-prefix>kek), and "
          "unsealed into locked memory at start. With --hsm-token, --hsm-key and "
          "--hsm-pin-file; instead of --kek-file.");
ABSL_FLAG(std::string, hsm_token, "", "The label of the HSM token holding --hsm-key.");
ABSL_FLAG(std::string, hsm_key, "",
          "The label of the AES-256 key on --hsm-token that seals the KEK. It must be "
          "sensitive and never extractable; any other is refused.");
ABSL_FLAG(std::string, hsm_pin_file, "",
          "File with the PIN of --hsm-token's user (e.g. a mounted Kubernetes Secret). "
          "Alternatively the environment variable SEALBOX_HSM_PIN.");
ABSL_FLAG(bool, hsm_create_key, false,
          "With --init: generate --hsm-key in the HSM (AES-256, sensitive, never "
          "extractable) when --hsm-token has no key by that label.");
ABSL_FLAG(std::string, kek_rotation_period, "",
          "With --hsm-module: rotate the KEK this long after it was made (e.g. 2160h for "
          "90 days): a new KEK, every record rewrapped in the background, no restart. "
          "Empty: only when asked (sealbox admin kek rotate).");
ABSL_FLAG(double, kek_rewrap_rate, 2000,
          "Records per second a KEK rotation rewraps at, so that etcd keeps serving the "
          "replicas meanwhile (0: as fast as it goes).");
ABSL_FLAG(int, hsm_check_seconds, 10,
          "How often the HSM key is checked while serving; while it cannot be used, "
          "health service sealbox.RootKey is NOT_SERVING and sealbox_root_key_up is 0 "
          "(the server keeps serving: its KEK is in memory).");
ABSL_FLAG(std::string, previous_kek_file, "",
          "While changing the KEK: the KEK the keystore was under before --kek-file. A "
          "keystore still under it is read and rewritten under --kek-file at startup. "
          "Drop it once every replica runs with the new KEK.");
ABSL_FLAG(std::string, admin_token_file, "",
          "File with the admin token (or environment variable SEALBOX_ADMIN_TOKEN). "
          "Without one, the admin plane refuses every call.");
ABSL_FLAG(bool, init, false,
          "Create an empty keystore in --data-dir (or --etcd-prefix) if there is none "
          "(first start); with --hsm-module, also its KEK, sealed by the HSM key.");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate chain (enables TLS).");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for --tls-cert.");
ABSL_FLAG(std::string, client_ca, "",
          "PEM CA bundle: require and verify client certificates (mTLS).");
ABSL_FLAG(int, tls_reload_seconds, 30,
          "How often the TLS files (sealbox's own and etcd's) are checked for changes: a "
          "renewed certificate serves new connections without a restart.");
ABSL_FLAG(std::vector<std::string>, cert_tenant, {},
          "Comma-separated COMMON_NAME=TENANT pairs: a client certificate with that "
          "subject CN acts as that tenant.");
ABSL_FLAG(bool, allow_insecure_listen, false,
          "Allow plaintext gRPC on a non-loopback address (TLS terminated by a proxy).");
ABSL_FLAG(std::string, metrics_listen, "",
          "host:port serving Prometheus metrics at /metrics (e.g. 0.0.0.0:9090; IPv4 "
          "only); off when empty.");
ABSL_FLAG(std::string, audit, "off",
          "Audit log: off, admin (every admin call) or all (every admin and data-plane "
          "call). One JSON line per request: who, which key and version, sizes, outcome "
          "and latency; never payloads, associated data or secrets.");
ABSL_FLAG(std::string, audit_log, "-",
          "Where audit lines go: a file (created 0600, appended to, reopened on SIGHUP "
          "for logrotate), or - for standard error.");
ABSL_FLAG(std::string, kms_socket, "",
          "Serve the Kubernetes KMS v2 plugin API on this unix socket, for "
          "kube-apiserver's encryption at rest (docs/OPERATIONS.md); off when empty. "
          "Needs --kms-key.");
ABSL_FLAG(std::string, kms_key, "",
          "TENANT/KEY: the key --kms-socket seals under (its primary version) and opens "
          "with (any version it still allows).");
ABSL_FLAG(std::string, kms_socket_mode, "0600",
          "The --kms-socket file's mode, in octal: who may call it (kube-apiserver sends "
          "no credentials).");
ABSL_FLAG(std::string, kms_socket_group, "",
          "The --kms-socket file's group (by name); empty: the server's own.");
ABSL_FLAG(int64_t, max_unary_bytes, 1 << 20,
          "Largest plaintext for unary Seal (default 1 MiB; at most 4 MiB - 1 KiB). "
          "Larger data goes through SealStream.");
ABSL_FLAG(int, max_streams, 256, "Streaming calls served at once.");
ABSL_FLAG(int, drain_seconds, 20,
          "On SIGTERM, how long in-flight calls may take to finish before they are "
          "cancelled.");
ABSL_FLAG(int, max_connection_age_seconds, 0,
          "Close each client connection (gracefully: calls in flight finish) after this "
          "long, so clients balancing over a headless Service re-resolve it and find "
          "new replicas. 0: never.");
ABSL_FLAG(int, auth_failures_per_minute, 30,
          "Failed authentications (bad, revoked or missing credentials) one client "
          "address (IP, without port) may have per minute; past that, its calls on "
          "both planes get RESOURCE_EXHAUSTED without being checked for a minute. "
          "0: no limit.");
ABSL_FLAG(int64_t, max_decryption_failures_per_key, 0,
          "Failed opens (Open, Rewrap, OpenStream) one key may have in this process "
          "before its opens are refused with RESOURCE_EXHAUSTED, until the key is "
          "rotated or the server restarts (NIST SP 800-38D Appendix B). Counted per "
          "replica. 0: no limit (failures are still counted in the metrics).");
ABSL_FLAG(int, stream_idle_seconds, 60,
          "End a stream (CANCELLED to the client) that has received no message and "
          "had no response taken for this long, freeing its slot. 0: never.");
ABSL_FLAG(int, idle_epoch_seconds, 300,
          "Every this many seconds, keys that have neither sealed nor opened with "
          "their sealing epoch since the last time give its expanded key back; their "
          "next Seal derives a new epoch (tens of microseconds). Bounds the memory of "
          "warm keys by the keys in use. 0: never.");
ABSL_FLAG(int64_t, min_rotation_period_seconds, 3600,
          "The shortest rotation period SetRotationPeriod accepts (a guard against a "
          "period given in the wrong unit). Replicas check for due rotations every "
          "tenth of it, between 0.1 s and 60 s.");
ABSL_FLAG(int, max_streams_per_connection, 100,
          "Calls one client connection may have open at once (HTTP/2 "
          "MAX_CONCURRENT_STREAMS).");
ABSL_FLAG(int, max_connection_idle_seconds, 300,
          "Close (GOAWAY) a client connection that has had no call for this long. "
          "0: never.");
ABSL_FLAG(int, handshake_timeout_seconds, 10,
          "Close a new connection that has not completed its TLS and HTTP/2 "
          "handshake within this long.");
ABSL_FLAG(int64_t, grpc_memory_limit_mb, 1024,
          "Memory gRPC may use for connection and message buffers (a resource "
          "quota); under pressure it shrinks flow-control windows and refuses new "
          "calls. 0: no limit.");
ABSL_FLAG(std::string, max_staleness, "30s",
          "How long a replica may serve from its keystore without confirming it is "
          "current with its store (etcd, or the file). Past it, both planes refuse "
          "every call with UNAVAILABLE and health turns NOT_SERVING, so anything "
          "revoked (a token, a key version, a scope) is refused within this long "
          "everywhere, even on a replica cut off from etcd; it serves again by itself "
          "once it is current. A duration (30s, 2m) or \"unbounded\" (never refuse).");
ABSL_FLAG(bool, dev, false,
          "Development mode: data, KEK and tokens generated under ./.sealbox-dev, a "
          "tenant 'demo' with key 'default', loopback only. Never for production.");

namespace sealbox::server {
namespace {

// Raw 32 bytes, or 64 hex digits with optional surrounding whitespace.
absl::StatusOr<Kek> ParseKek(std::string text) {
  std::string stripped(absl::StripAsciiWhitespace(text));
  std::string raw;
  if (stripped.size() == 64 &&
      std::all_of(stripped.begin(), stripped.end(), absl::ascii_isxdigit)) {
    raw = absl::HexStringToBytes(stripped);
  } else {
    raw = text;
  }
  absl::StatusOr<Kek> kek = Kek::FromBytes(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()));
  crypto::SecureWipe(raw.data(), raw.size());
  crypto::SecureWipe(stripped.data(), stripped.size());
  crypto::SecureWipe(text.data(), text.size());
  return kek;
}

absl::StatusOr<custody::HsmOptions> HsmFromFlags() {
  custody::HsmOptions hsm;
  hsm.module = absl::GetFlag(FLAGS_hsm_module);
  hsm.token = absl::GetFlag(FLAGS_hsm_token);
  hsm.key_label = absl::GetFlag(FLAGS_hsm_key);
  hsm.create_key = absl::GetFlag(FLAGS_hsm_create_key);
  if (hsm.create_key && !absl::GetFlag(FLAGS_init)) {
    return absl::InvalidArgumentError("--hsm-create-key only goes with --init");
  }
  std::string pin;
  const std::string pin_file = absl::GetFlag(FLAGS_hsm_pin_file);
  if (!pin_file.empty()) {
    absl::StatusOr<std::string> text = ReadFlagFile(pin_file, "hsm-pin-file");
    if (!text.ok()) return text.status();
    pin = *std::move(text);
    hsm.pin_source = absl::StrCat("the PIN in ", pin_file, " (--hsm-pin-file)");
  } else if (const char* env = std::getenv("SEALBOX_HSM_PIN")) {
    pin = env;
    hsm.pin_source = "the PIN in SEALBOX_HSM_PIN";
  } else {
    return absl::InvalidArgumentError("--hsm-module needs --hsm-pin-file (or SEALBOX_HSM_PIN)");
  }
  // A file written by `echo` ends with a newline that is not part of the PIN.
  absl::string_view trimmed = absl::StripTrailingAsciiWhitespace(pin);
  hsm.pin = crypto::SecretBytes(
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(trimmed.data()), trimmed.size()));
  crypto::SecureWipe(pin.data(), pin.size());
  if (hsm.pin.empty()) return absl::InvalidArgumentError("the HSM PIN is empty");
  const int check_seconds = absl::GetFlag(FLAGS_hsm_check_seconds);
  if (check_seconds < 1) return absl::InvalidArgumentError("--hsm-check-seconds must be >= 1");
  hsm.check_interval = absl::Seconds(check_seconds);
  return hsm;
}

absl::Status EtcdFromFlags(ServerConfig& config) {
  for (const std::string& endpoint : absl::GetFlag(FLAGS_etcd_endpoints)) {
    if (!endpoint.empty()) config.etcd.endpoints.push_back(endpoint);
  }
  config.etcd_prefix = absl::GetFlag(FLAGS_etcd_prefix);
  config.etcd.ca_file = absl::GetFlag(FLAGS_etcd_ca);
  config.etcd.cert_file = absl::GetFlag(FLAGS_etcd_cert);
  config.etcd.key_file = absl::GetFlag(FLAGS_etcd_key);
  config.etcd.user = absl::GetFlag(FLAGS_etcd_user);
  // The file is read again at each login to etcd (server/keystore/etcd/etcd_client.h).
  config.etcd.password_file = absl::GetFlag(FLAGS_etcd_password_file);
  if (!config.etcd.password_file.empty()) {
    if (absl::StatusOr<std::string> password =
            ReadFlagFile(config.etcd.password_file, "etcd-password-file");
        !password.ok()) {
      return password.status();
    }
  } else if (const char* env = std::getenv("SEALBOX_ETCD_PASSWORD")) {
    config.etcd.password = env;
  }
  const bool etcd_only =
      !config.etcd.ca_file.empty() || !config.etcd.cert_file.empty() || !config.etcd.user.empty();
  if (etcd_only && config.etcd.endpoints.empty()) {
    return absl::InvalidArgumentError(
        "--etcd-ca, --etcd-cert and --etcd-user need --etcd-endpoints");
  }
  return absl::OkStatus();
}

absl::Status KmsFromFlags(KmsSocketOptions& kms) {
  kms.path = absl::GetFlag(FLAGS_kms_socket);
  const std::string key = absl::GetFlag(FLAGS_kms_key);
  if (kms.path.empty()) {
    if (!key.empty()) return absl::InvalidArgumentError("--kms-key needs --kms-socket");
    return absl::OkStatus();
  }
  absl::StatusOr<KmsKey> parsed = ParseKmsKey(key);
  if (!parsed.ok()) return parsed.status();
  kms.key = *std::move(parsed);
  const std::string mode = absl::GetFlag(FLAGS_kms_socket_mode);
  char* end = nullptr;
  const unsigned long bits = std::strtoul(mode.c_str(), &end, 8);
  if (mode.empty() || *end != '\0' || bits > 0777) {
    return absl::InvalidArgumentError("--kms-socket-mode must be octal permission bits, like 0660");
  }
  kms.mode = static_cast<mode_t>(bits);
  kms.group = absl::GetFlag(FLAGS_kms_socket_group);
  return absl::OkStatus();
}

absl::StatusOr<ServerConfig> ConfigFromFlags() {
  ServerConfig config;
  config.limits.max_unary_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_max_unary_bytes));
  config.limits.max_concurrent_streams = absl::GetFlag(FLAGS_max_streams);
  config.drain_timeout = absl::Seconds(absl::GetFlag(FLAGS_drain_seconds));
  config.max_connection_age = absl::Seconds(absl::GetFlag(FLAGS_max_connection_age_seconds));
  config.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  absl::StatusOr<AuditLevel> audit = ParseAuditLevel(absl::GetFlag(FLAGS_audit));
  if (!audit.ok()) return audit.status();
  config.audit = *audit;
  config.audit_log = absl::GetFlag(FLAGS_audit_log);
  if (config.audit == AuditLevel::kOff && config.audit_log != "-") {
    return absl::InvalidArgumentError(
        "--audit-log says where audit lines go; also say which: --audit=all or "
        "--audit=admin");
  }
  config.auth_limits.max_failures = absl::GetFlag(FLAGS_auth_failures_per_minute);
  config.limits.max_decryption_failures_per_key = static_cast<uint64_t>(
      std::max<int64_t>(0, absl::GetFlag(FLAGS_max_decryption_failures_per_key)));
  config.limits.stream_idle_timeout = absl::Seconds(absl::GetFlag(FLAGS_stream_idle_seconds));
  config.idle_epoch_sweep = absl::Seconds(absl::GetFlag(FLAGS_idle_epoch_seconds));
  config.min_rotation_period =
      absl::Seconds(std::max<int64_t>(1, absl::GetFlag(FLAGS_min_rotation_period_seconds)));
  config.max_streams_per_connection = absl::GetFlag(FLAGS_max_streams_per_connection);
  config.max_connection_idle = absl::Seconds(absl::GetFlag(FLAGS_max_connection_idle_seconds));
  config.handshake_timeout = absl::Seconds(absl::GetFlag(FLAGS_handshake_timeout_seconds));
  config.grpc_memory_limit_bytes = absl::GetFlag(FLAGS_grpc_memory_limit_mb) << 20;
  if (absl::Status kms = KmsFromFlags(config.kms); !kms.ok()) return kms;
  absl::StatusOr<absl::Duration> max_staleness =
      ParseMaxStaleness(absl::GetFlag(FLAGS_max_staleness));
  if (!max_staleness.ok()) return max_staleness.status();
  config.max_staleness = *max_staleness;
  if (absl::GetFlag(FLAGS_dev)) {
    config.listen = absl::GetFlag(FLAGS_listen);  // loopback only: no TLS in dev mode
    if (absl::Status s = PrepareDevConfig(config); !s.ok()) return s;
    return config;
  }
  config.listen = absl::GetFlag(FLAGS_listen);
  config.data_dir = absl::GetFlag(FLAGS_data_dir);
  if (absl::Status s = EtcdFromFlags(config); !s.ok()) return s;
  config.create_keystore = absl::GetFlag(FLAGS_init);
  config.allow_insecure_listen = absl::GetFlag(FLAGS_allow_insecure_listen);

  const std::string kek_file = absl::GetFlag(FLAGS_kek_file);
  if (!absl::GetFlag(FLAGS_hsm_module).empty()) {
    if (!kek_file.empty() || std::getenv("SEALBOX_KEK") != nullptr) {
      return absl::InvalidArgumentError(
          "--hsm-module seals the KEK in an HSM: give no --kek-file or SEALBOX_KEK with it");
    }
    absl::StatusOr<custody::HsmOptions> hsm = HsmFromFlags();
    if (!hsm.ok()) return hsm.status();
    config.hsm = *std::move(hsm);
    if (const std::string period = absl::GetFlag(FLAGS_kek_rotation_period); !period.empty()) {
      if (!absl::ParseDuration(period, &config.kek_rotation_period) ||
          config.kek_rotation_period <= absl::ZeroDuration()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--kek-rotation-period: '", period, "' is not a duration (2160h)"));
      }
    }
    config.kek_rewrap_records_per_second = absl::GetFlag(FLAGS_kek_rewrap_rate);
    if (config.kek_rewrap_records_per_second < 0) {
      return absl::InvalidArgumentError("--kek-rewrap-rate must be 0 or more");
    }
  } else if (!kek_file.empty()) {
    absl::StatusOr<std::string> text = ReadFlagFile(kek_file, "kek-file");
    if (!text.ok()) return text.status();
    absl::StatusOr<Kek> kek = ParseKek(*std::move(text));
    if (!kek.ok()) return kek.status();
    config.kek = *std::move(kek);
  } else if (const char* env = std::getenv("SEALBOX_KEK")) {
    absl::StatusOr<Kek> kek = ParseKek(env);
    if (!kek.ok()) return kek.status();
    config.kek = *std::move(kek);
  } else {
    return absl::InvalidArgumentError(
        "no KEK: give --hsm-module (production), --kek-file or SEALBOX_KEK (or use --dev "
        "to try sealbox)");
  }

  const std::string previous_kek_file = absl::GetFlag(FLAGS_previous_kek_file);
  if (!previous_kek_file.empty()) {
    absl::StatusOr<std::string> text = ReadFlagFile(previous_kek_file, "previous-kek-file");
    if (!text.ok()) return text.status();
    absl::StatusOr<Kek> kek = ParseKek(*std::move(text));
    if (!kek.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--previous-kek-file: ", kek.status().message()));
    }
    config.previous_kek = *std::move(kek);
  }

  const std::string admin_file = absl::GetFlag(FLAGS_admin_token_file);
  if (!admin_file.empty()) {
    absl::StatusOr<std::string> token = ReadFlagFile(admin_file, "admin-token-file");
    if (!token.ok()) return token.status();
    config.admin_token = std::string(absl::StripAsciiWhitespace(*token));
  } else if (const char* env = std::getenv("SEALBOX_ADMIN_TOKEN")) {
    config.admin_token = env;
  }

  // TLS files: checked and then watched by the server (server/process/tls_credentials.h).
  config.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  config.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  config.client_ca_file = absl::GetFlag(FLAGS_client_ca);
  config.tls_reload_interval = absl::Seconds(absl::GetFlag(FLAGS_tls_reload_seconds));
  config.etcd.tls_reload_interval = config.tls_reload_interval;
  for (const std::string& pair : absl::GetFlag(FLAGS_cert_tenant)) {
    std::vector<std::string> parts = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cert_tenant: expected COMMON_NAME=TENANT, got \"", pair, "\""));
    }
    config.cert_tenants[parts[0]] = parts[1];
  }
  return config;
}

// --migrate-keystore / --export-keystore: one copy, then exit.
int TransferKeystore(const ServerConfig& config) {
  const bool migrate = absl::GetFlag(FLAGS_migrate_keystore);
  if (migrate && absl::GetFlag(FLAGS_export_keystore)) {
    std::fprintf(stderr, "sealbox-server: --migrate-keystore or --export-keystore, not both\n");
    return 2;
  }
  if (config.data_dir.empty() || !config.uses_etcd()) {
    std::fprintf(stderr, "sealbox-server: %s needs --data-dir and --etcd-endpoints\n",
                 migrate ? "--migrate-keystore" : "--export-keystore");
    return 2;
  }
  if (config.hsm.has_value()) {
    // Not yet: the sealed KEK would have to be copied with the keystore.
    std::fprintf(stderr,
                 "sealbox-server: %s does not take --hsm-module yet; copy the keystore with "
                 "--kek-file, then seal that KEK in the HSM (docs/OPERATIONS.md)\n",
                 migrate ? "--migrate-keystore" : "--export-keystore");
    return 2;
  }
  absl::StatusOr<std::string> done =
      migrate ? MigrateKeystoreToEtcd(config) : ExportKeystoreFromEtcd(config);
  if (!done.ok()) {
    std::fprintf(stderr, "sealbox-server: %s\n", std::string(done.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", done->c_str());
  return 0;
}

int Run(const std::vector<grpc::Service*>& extra_services) {
  // Before any secret is read: no core dump may hold one.
  const CoreDumpReport core_dumps = DisableCoreDumps();
  RaiseOpenFileLimit();
  TuneMalloc();
  // absl::Mutex checks lock order against one process-wide graph, under a global
  // lock, on every acquisition unless told not to (Debian's absl has the check on):
  // a cost in every call's profile, and a point where threads queue. Tests keep
  // the check; the server does not pay for it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  // SIGTERM, SIGINT and SIGHUP are taken synchronously by this thread (sigwait
  // below), so block them before any other thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<ServerConfig> config = ConfigFromFlags();
  if (!config.ok()) {
    std::fprintf(stderr, "sealbox-server: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  if (absl::GetFlag(FLAGS_migrate_keystore) || absl::GetFlag(FLAGS_export_keystore)) {
    return TransferKeystore(*config);
  }
  const bool dev = absl::GetFlag(FLAGS_dev);
  const std::string admin_token = config->admin_token;  // config moves into the server
  absl::StatusOr<std::unique_ptr<SealboxServer>> server =
      SealboxServer::Start(*std::move(config), extra_services);
  if (!server.ok()) {
    std::fprintf(stderr, "sealbox-server: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  LogProcessHardening(core_dumps);
  Log("serving")
      .Add("port", int64_t{(*server)->port()})
      .Add("metrics_port", int64_t{(*server)->metrics_port()})
      .Add("crypto", crypto::DefaultImplementation().value_or("unavailable"))
      .Add("dev", dev);
  if (dev) {
    if (absl::Status s = SetUpDemoTenant(admin_token, (*server)->port()); !s.ok()) {
      std::fprintf(stderr, "sealbox-server: dev setup: %s\n", std::string(s.message()).c_str());
      (*server)->Shutdown();
      return 1;
    }
  }
  int signal_number = 0;
  // SIGHUP: logrotate has moved the audit log aside.
  while (sigwait(&signals, &signal_number) == 0 && signal_number == SIGHUP) {
    (*server)->ReopenAuditLog();
  }
  Log("draining")
      .Add("signal", !(*server)->failure().ok() ? "keystore failure"
                     : signal_number == SIGTERM ? "SIGTERM"
                                                : "SIGINT")
      .Add("drain_seconds", int64_t{absl::GetFlag(FLAGS_drain_seconds)});
  (*server)->Shutdown();
  (*server)->Wait();
  if (absl::Status failure = (*server)->failure(); !failure.ok()) {
    std::fprintf(stderr, "sealbox-server: %s\n", std::string(failure.message()).c_str());
    return 1;
  }
  Log("stopped");
  return 0;
}

// Abseil names flags with underscores; people (and the docs) write dashes. Both
// spellings work: "--data-dir=x" becomes "--data_dir=x" before parsing.
std::vector<char*> DashesToUnderscores(int argc, char** argv, std::vector<std::string>& storage) {
  storage.assign(argv, argv + argc);
  std::vector<char*> result;
  for (std::string& arg : storage) {
    if (arg.rfind("--", 0) == 0) {
      const size_t end = std::min(arg.find('='), arg.size());
      for (size_t i = 2; i < end; ++i) {
        if (arg[i] == '-') arg[i] = '_';
      }
    }
    result.push_back(arg.data());
  }
  return result;
}

}  // namespace

int RunServer(int argc, char** argv, const std::vector<grpc::Service*>& extra_services) {
  absl::SetProgramUsageMessage(
      "AES-GCM encryption service over gRPC.\n"
      "  first start:  sealbox-server --data-dir DIR --hsm-module LIB --hsm-token T --hsm-key K\n"
      "                  --hsm-pin-file PIN --admin-token-file T --init\n"
      "  replicas:     sealbox-server --etcd-endpoints HOST:2379 --hsm-module LIB ... [--init]\n"
      "  development:  --kek-file KEK in place of the --hsm-* flags\n"
      "  try it:       sealbox-server --dev\n"
      "Flags may be written with dashes or underscores (--data-dir, --data_dir).");
  // Abseil's --help lists only flags of a file named after the program; all of
  // sealbox-server's flags live in this file, so list them.
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/process/run_server.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  std::vector<std::string> storage;
  std::vector<char*> args = DashesToUnderscores(argc, argv, storage);
  absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  return Run(extra_services);
}

}  // namespace sealbox::server
