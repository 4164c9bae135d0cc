// Who is calling: bearer tokens (tenant or admin) and TLS client certificates.
#ifndef SEALBOX_SERVER_AUTH_AUTH_H_
#define SEALBOX_SERVER_AUTH_AUTH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"
#include "server/auth/auth_limiter.h"
#include "server/keystore/keystore.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

// Who a call comes from.
struct Principal {
  // On the admin plane, kAdminTokensTenant.
  std::string tenant;
  // The bearer token's grant (its id, expiry and scope); null for a client
  // certificate, which may do everything its tenant can, and for the bootstrap admin
  // token.
  std::shared_ptr<const TokenGrant> grant;

  // For logs: the token's id, "bootstrap" for the configured admin token, or "" (a
  // client certificate).
  std::string token_id() const;
};

class Authenticator {
 public:
  // `admin_token` may be empty: then no admin calls are possible. `cert_tenants`
  // maps a client certificate's subject common name to a tenant (mTLS).
  // Failures are counted in `metrics` and, per caller address, in `limiter`, whose
  // limited addresses get RESOURCE_EXHAUSTED before any credential is looked at.
  // `snapshots` is asked once for a caught-up snapshot about a token the call's
  // snapshot does not know (issued a moment ago through another replica), before it
  // is refused. Any of the three may be null.
  Authenticator(const std::string& admin_token, std::map<std::string, std::string> cert_tenants,
                AuthFailureLimiter* limiter = nullptr, Metrics* metrics = nullptr,
                SnapshotSource* snapshots = nullptr);

  // The caller, from `authorization: Bearer <token>` or a mapped client
  // certificate. UNAUTHENTICATED when neither identifies a tenant, or "token
  // expired" (the admin token is not a tenant: PERMISSION_DENIED). `snapshot`
  // becomes the fresher one when the token was found only after catching up.
  absl::StatusOr<Principal> Identify(const grpc::ServerContextBase& context,
                                     std::shared_ptr<const Snapshot>& snapshot) const;

  // An admin caller: the bootstrap admin token (unless retired) or an admin token
  // from the keystore (unless expired). UNAUTHENTICATED without a valid token,
  // PERMISSION_DENIED for a tenant token.
  absl::StatusOr<Principal> Admin(const grpc::ServerContextBase& context,
                                  std::shared_ptr<const Snapshot> snapshot) const;

  // SHA-256 of the bootstrap admin token (32 raw bytes), or "" when none is set.
  std::string BootstrapAdminSha256() const;

 private:
  // What a credential check found, and why it failed (a metrics label).
  struct Verdict {
    Verdict(absl::Status status, const char* reason, Principal principal = {})
        : status(std::move(status)), reason(reason), principal(std::move(principal)) {}
    absl::Status status;
    const char* reason;
    Principal principal;  // when OK on the data plane
  };
  // Whether a token's SHA-256 is the bootstrap admin token's (in constant time).
  bool IsAdminToken(const std::string& sha256) const;
  Verdict CheckTenant(const grpc::ServerContextBase& context,
                      std::shared_ptr<const Snapshot>& snapshot) const;
  Verdict CheckAdmin(const grpc::ServerContextBase& context,
                     std::shared_ptr<const Snapshot>& snapshot) const;
  // Applies the per-address limit around `check`, and counts its failures.
  Verdict Limited(const grpc::ServerContextBase& context, const char* plane,
                  Verdict (Authenticator::*check)(const grpc::ServerContextBase&,
                                                  std::shared_ptr<const Snapshot>&) const,
                  std::shared_ptr<const Snapshot>& snapshot) const;

  AuthFailureLimiter* limiter_;
  Metrics* metrics_;
  std::optional<std::string> admin_token_sha256_;  // TokenSha256 of the configured token
  std::map<std::string, std::string> cert_tenants_;
  SnapshotSource* const snapshots_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_AUTH_AUTH_H_
