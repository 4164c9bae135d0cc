// Who is calling: bearer tokens (tenant or admin) and TLS client certificates.
#ifndef SEALBOX_SERVER_AUTH_H_
#define SEALBOX_SERVER_AUTH_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"
#include "server/keystore/keystore.h"

namespace sealbox::server {

class Authenticator {
 public:
  // `admin_token` may be empty: then no admin calls are possible. `cert_tenants`
  // maps a client certificate's subject common name to a tenant (mTLS).
  Authenticator(const std::string& admin_token,
                std::map<std::string, std::string> cert_tenants);

  // The caller's tenant, from `authorization: Bearer <token>` or a mapped client
  // certificate. UNAUTHENTICATED when neither identifies a tenant (the admin token
  // is not a tenant: PERMISSION_DENIED).
  absl::StatusOr<std::string> Tenant(const grpc::ServerContextBase& context,
                                     const Snapshot& snapshot) const;

  // OK for the admin token; UNAUTHENTICATED without a valid token,
  // PERMISSION_DENIED for a tenant token.
  absl::Status Admin(const grpc::ServerContextBase& context,
                     const Snapshot& snapshot) const;

 private:
  std::optional<std::array<uint8_t, 32>> admin_token_sha256_;
  std::map<std::string, std::string> cert_tenants_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_AUTH_H_
