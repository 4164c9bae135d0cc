// Bearer tokens in the keystore: a tenant's (scoped, expiring, renewable) and the
// admin plane's, issued, renewed, revoked and, long after they expire, deleted. Only
// their SHA-256 is stored (tokens.h); a token itself is shown once, when issued.
#ifndef SEALBOX_SERVER_KEYSTORE_TOKEN_ADMIN_H_
#define SEALBOX_SERVER_KEYSTORE_TOKEN_ADMIN_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/keystore/info.h"
#include "server/keystore/keystore_transaction.h"

namespace sealbox::server {

// Errors as for every admin call (keystore.h). Messages never carry a token, nor a
// token id that was not found (a token pasted in place of its id must not reach a log).
class TokenAdmin {
 public:
  // Expired tokens are deleted this long after they expire: renewals leave a record
  // per renewal, and a service renewing hourly would otherwise grow the keystore by
  // thousands a year.
  static constexpr absl::Duration kExpiredTokenRetention = absl::Hours(7 * 24);

  explicit TokenAdmin(KeystoreWriter& keystore) : keystore_(keystore) {}
  TokenAdmin(const TokenAdmin&) = delete;
  TokenAdmin& operator=(const TokenAdmin&) = delete;

  // INVALID_ARGUMENT for a bad scope (TokenAccess::Create), a negative ttl, or a
  // max_ttl without a ttl or shorter than it.
  absl::StatusOr<IssuedToken> IssueToken(const std::string& tenant, const TokenRequest& request);
  // A token with every permission that never expires.
  absl::StatusOr<IssuedToken> IssueToken(const std::string& tenant,
                                         const std::string& description) {
    TokenRequest request;
    request.description = description;
    return IssueToken(tenant, request);
  }
  // A successor to token `token_id`: its tenant, description and scope, for `ttl`
  // (zero: the lifetime it was issued for), never past its max_expire_time.
  // FAILED_PRECONDITION for a token that does not expire or has reached its
  // max_expire_time; NOT_FOUND when it was revoked meanwhile.
  absl::StatusOr<IssuedToken> RenewToken(const std::string& tenant, const std::string& token_id,
                                         absl::Duration ttl);
  absl::Status RevokeToken(const std::string& tenant, const std::string& token_id);

  // Admin tokens, kept as tokens of the reserved tenant kAdminTokensTenant (the
  // request's scope is not used: an admin token is full or read-only).
  absl::StatusOr<IssuedToken> IssueAdminToken(const TokenRequest& request, bool read_only);
  absl::Status RevokeAdminToken(const std::string& token_id);
  // Retires the bootstrap admin token (the one a server is configured with), known by
  // its SHA-256: it is refused on every replica from then on. FAILED_PRECONDITION
  // unless an admin token that may change the keystore remains.
  absl::Status RetireBootstrapAdminToken(const std::string& sha256);
  // Live admin tokens (not retired bootstrap tokens).
  std::vector<TokenInfo> ListAdminTokens() const;

  // Deletes the tokens (tenant and admin) that expired kExpiredTokenRetention or more
  // before `now`. A token's expiry never changes, so the snapshot decides; a replica
  // that finds one already gone moves on. Returns how many this call deleted.
  int DeleteExpiredTokens(absl::Time now);

 private:
  // Stores a new token of `tenant` that `fill` describes (it may read records through
  // the transaction); the id and hash are set here.
  absl::StatusOr<IssuedToken> StoreNewToken(
      const std::string& tenant,
      const std::function<absl::Status(KeystoreTransaction&, internal::Token&)>& fill);
  // Deletes token `token_id` of `tenant`: NOT_FOUND (never echoing the id) without it.
  absl::Status DeleteToken(const std::string& tenant, const std::string& token_id);

  KeystoreWriter& keystore_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_TOKEN_ADMIN_H_
