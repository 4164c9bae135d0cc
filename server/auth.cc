#include "server/auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace sealbox::server {
namespace {

std::array<uint8_t, 32> Sha256(absl::string_view data) {
  std::array<uint8_t, 32> digest;
  SHA256(reinterpret_cast<const uint8_t*>(data.data()), data.size(), digest.data());
  return digest;
}

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

Authenticator::Authenticator(const std::string& admin_token,
                             std::map<std::string, std::string> cert_tenants)
    : cert_tenants_(std::move(cert_tenants)) {
  if (!admin_token.empty()) admin_token_sha256_ = Sha256(admin_token);
}

absl::StatusOr<std::string> Authenticator::Tenant(
    const grpc::ServerContextBase& context, const Snapshot& snapshot) const {
  if (std::optional<std::string> token = BearerToken(context)) {
    absl::StatusOr<std::string> tenant = snapshot.TenantForToken(*token);
    if (tenant.ok()) return tenant;
    if (admin_token_sha256_.has_value()) {
      std::array<uint8_t, 32> digest = Sha256(*token);
      if (CRYPTO_memcmp(digest.data(), admin_token_sha256_->data(), 32) == 0) {
        return absl::PermissionDeniedError(
            "the admin token cannot use the data plane; use a tenant token");
      }
    }
    return absl::UnauthenticatedError("invalid or revoked token");
  }
  if (std::optional<std::string> name = CertificateName(context)) {
    auto it = cert_tenants_.find(*name);
    if (it != cert_tenants_.end()) return it->second;
    return absl::UnauthenticatedError("client certificate is not mapped to a tenant");
  }
  return absl::UnauthenticatedError(
      "missing credentials: send 'authorization: Bearer <token>'");
}

absl::Status Authenticator::Admin(const grpc::ServerContextBase& context,
                                  const Snapshot& snapshot) const {
  std::optional<std::string> token = BearerToken(context);
  if (!token.has_value()) {
    return absl::UnauthenticatedError(
        "missing credentials: send 'authorization: Bearer <admin token>'");
  }
  if (admin_token_sha256_.has_value()) {
    std::array<uint8_t, 32> digest = Sha256(*token);
    if (CRYPTO_memcmp(digest.data(), admin_token_sha256_->data(), 32) == 0) {
      return absl::OkStatus();
    }
  }
  if (snapshot.TenantForToken(*token).ok()) {
    return absl::PermissionDeniedError("admin calls need the admin token");
  }
  return absl::UnauthenticatedError("invalid admin token");
}

}  // namespace sealbox::server
