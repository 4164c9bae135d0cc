// The gRPC listener's TLS: certificate chain, key and (for mTLS) client CA bundle are
// files, checked once at startup and then watched, so a renewed certificate (a
// Kubernetes Secret rewritten by cert-manager, a certbot renewal) is served to new
// connections without a restart. Open connections keep the certificate they began with.
#ifndef SEALBOX_SERVER_PROCESS_TLS_CREDENTIALS_H_
#define SEALBOX_SERVER_PROCESS_TLS_CREDENTIALS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"
#include "server/process/server_config.h"

namespace sealbox::server {

// Plaintext when the config names no certificate. Otherwise checks that the
// certificate and key files parse and belong together and that the CA file holds a
// certificate (INVALID_ARGUMENT naming the flag), then returns credentials that
// re-read the files every config.tls_reload_interval. A later bad or half-written
// set of files is ignored (gRPC keeps serving the last good one).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ListenerCredentials(
    const ServerConfig& config);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_TLS_CREDENTIALS_H_
