#include "server/auth/auth.h"

#include <openssl/crypto.h>

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "server/auth/tokens.h"
#include "server/keystore/names.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

// The bearer token of the call, if any.
std::optional<std::string> BearerToken(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return std::nullopt;
  absl::string_view value(it->second.data(), it->second.size());
  constexpr absl::string_view kScheme = "Bearer ";
  if (!absl::StartsWithIgnoreCase(value, kScheme)) return std::nullopt;
  return std::string(value.substr(kScheme.size()));
}

// The verified client certificate's subject common name, if mTLS is in use.
std::optional<std::string> CertificateName(const grpc::ServerContextBase& context) {
  auto auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return std::nullopt;
  for (const auto& name : auth->FindPropertyValues("x509_common_name")) {
    return std::string(name.data(), name.size());
  }
  return std::nullopt;
}

}  // namespace

// Secret comparisons here: the admin token is compared as a SHA-256 digest with
// CRYPTO_memcmp (constant time). Tenant tokens are found by their digest in a map
// (Snapshot::TenantForToken): the lookup's timing depends only on a hash of what the
// caller sent, which cannot be steered towards a stored token's digest, so it leaks
// nothing usable about any token.
Authenticator::Authenticator(const std::string& admin_token,
                             std::map<std::string, std::string> cert_tenants,
                             AuthFailureLimiter* limiter, Metrics* metrics,
                             SnapshotSource* snapshots)
    : limiter_(limiter),
      metrics_(metrics),
      cert_tenants_(std::move(cert_tenants)),
      snapshots_(snapshots) {
  if (!admin_token.empty()) admin_token_sha256_ = TokenSha256(admin_token);
}

Authenticator::Verdict Authenticator::Limited(
    const grpc::ServerContextBase& context, const char* plane,
    Verdict (Authenticator::*check)(const grpc::ServerContextBase&,
                                    std::shared_ptr<const Snapshot>&) const,
    std::shared_ptr<const Snapshot>& snapshot) const {
  // gRPC builds the peer string anew on every call: only when the limiter needs it.
  std::string address;
  auto peer_address = [&]() -> const std::string& {
    if (address.empty()) address = PeerAddress(context.peer());
    return address;
  };
  if (limiter_ != nullptr && limiter_->tracking()) {
    if (absl::Status limited = limiter_->Check(peer_address()); !limited.ok()) {
      if (metrics_ != nullptr) metrics_->CountAuthLimited(plane);
      return {limited, "limited"};
    }
  }
  Verdict verdict = (this->*check)(context, snapshot);
  if (verdict.status.ok()) return verdict;
  if (metrics_ != nullptr) metrics_->CountAuthFailure(plane, verdict.reason);
  // Only failures that could be guessing count against the address: a valid token on
  // the wrong plane, or one that has expired, is a mistake, not an attack.
  if (limiter_ != nullptr && absl::IsUnauthenticated(verdict.status) &&
      absl::string_view(verdict.reason) != "expired" && limiter_->RecordFailure(peer_address())) {
    Log("auth_limited", "warning")
        .Add("peer_address", address)
        .Add("plane", plane)
        .Add("detail",
             "too many failed authentication attempts: this address's calls are "
             "refused for a while");
  }
  return verdict;
}

absl::StatusOr<Principal> Authenticator::Identify(const grpc::ServerContextBase& context,
                                                  std::shared_ptr<const Snapshot>& snapshot) const {
  Verdict verdict = Limited(context, "data", &Authenticator::CheckTenant, snapshot);
  if (!verdict.status.ok()) return verdict.status;
  return std::move(verdict.principal);
}

absl::StatusOr<Principal> Authenticator::Admin(const grpc::ServerContextBase& context,
                                               std::shared_ptr<const Snapshot> snapshot) const {
  Verdict verdict = Limited(context, "admin", &Authenticator::CheckAdmin, snapshot);
  if (!verdict.status.ok()) return verdict.status;
  return std::move(verdict.principal);
}

bool Authenticator::IsAdminToken(const std::string& sha256) const {
  return admin_token_sha256_.has_value() && sha256.size() == admin_token_sha256_->size() &&
         CRYPTO_memcmp(sha256.data(), admin_token_sha256_->data(), sha256.size()) == 0;
}

std::string Authenticator::BootstrapAdminSha256() const { return admin_token_sha256_.value_or(""); }

std::string Principal::token_id() const {
  if (grant != nullptr) return grant->id;
  return tenant == kAdminTokensTenant ? "bootstrap" : "";
}

namespace {

// A grant's expiry, checked on every call by every replica against its own clock.
bool Expired(const TokenGrant& grant) {
  return grant.expire_time != absl::InfiniteFuture() && absl::Now() >= grant.expire_time;
}

}  // namespace

Authenticator::Verdict Authenticator::CheckTenant(const grpc::ServerContextBase& context,
                                                  std::shared_ptr<const Snapshot>& snapshot) const {
  if (std::optional<std::string> token = BearerToken(context)) {
    // Hashed once: the lookups and the comparison with the admin token share it.
    const std::string digest = TokenSha256(*token);
    absl::StatusOr<std::shared_ptr<const TokenGrant>> grant = snapshot->TokenForSha256(digest);
    // Issued a moment ago through another replica? Look once more, caught up.
    if (!grant.ok() && snapshots_ != nullptr) {
      if (std::shared_ptr<const Snapshot> fresher = snapshots_->CaughtUp()) {
        snapshot = std::move(fresher);
        grant = snapshot->TokenForSha256(digest);
      }
    }
    if (grant.ok() && (*grant)->tenant == kAdminTokensTenant && !(*grant)->retired) {
      return {absl::PermissionDeniedError(
                  "an admin token cannot use the data plane; use a tenant token"),
              "wrong_plane"};
    }
    if (grant.ok() && !(*grant)->retired) {
      if (Expired(**grant)) return {absl::UnauthenticatedError("token expired"), "expired"};
      std::string tenant = (*grant)->tenant;
      return {absl::OkStatus(), "", Principal{std::move(tenant), *std::move(grant)}};
    }
    if (IsAdminToken(digest)) {
      return {absl::PermissionDeniedError(
                  "the admin token cannot use the data plane; use a tenant token"),
              "wrong_plane"};
    }
    return {absl::UnauthenticatedError("invalid or revoked token"), "invalid"};
  }
  if (std::optional<std::string> name = CertificateName(context)) {
    auto it = cert_tenants_.find(*name);
    if (it != cert_tenants_.end()) return {absl::OkStatus(), "", Principal{it->second, {}}};
    return {absl::UnauthenticatedError("client certificate is not mapped to a tenant"), "invalid"};
  }
  return {absl::UnauthenticatedError("missing credentials: send 'authorization: Bearer <token>'"),
          "missing"};
}

Authenticator::Verdict Authenticator::CheckAdmin(const grpc::ServerContextBase& context,
                                                 std::shared_ptr<const Snapshot>& snapshot) const {
  std::optional<std::string> token = BearerToken(context);
  if (!token.has_value()) {
    return {absl::UnauthenticatedError(
                "missing credentials: send 'authorization: Bearer <admin token>'"),
            "missing"};
  }
  // Hashed once: the lookups and the comparison with the bootstrap token share it.
  const std::string digest = TokenSha256(*token);
  absl::StatusOr<std::shared_ptr<const TokenGrant>> grant = snapshot->TokenForSha256(digest);
  if (IsAdminToken(digest)) {
    if (grant.ok() && (*grant)->retired) {
      return {absl::UnauthenticatedError("this admin token was retired"), "invalid"};
    }
    return {absl::OkStatus(), "", Principal{std::string(kAdminTokensTenant), nullptr}};
  }
  // Issued a moment ago through another replica? Look once more, caught up.
  if (!grant.ok() && snapshots_ != nullptr) {
    if (std::shared_ptr<const Snapshot> fresher = snapshots_->CaughtUp()) {
      snapshot = std::move(fresher);
      grant = snapshot->TokenForSha256(digest);
    }
  }
  if (grant.ok() && !(*grant)->retired) {
    if ((*grant)->tenant != kAdminTokensTenant) {
      return {absl::PermissionDeniedError("admin calls need an admin token"), "wrong_plane"};
    }
    if (Expired(**grant)) return {absl::UnauthenticatedError("token expired"), "expired"};
    return {absl::OkStatus(), "", Principal{std::string(kAdminTokensTenant), *std::move(grant)}};
  }
  return {absl::UnauthenticatedError("invalid admin token"), "invalid"};
}

}  // namespace sealbox::server
