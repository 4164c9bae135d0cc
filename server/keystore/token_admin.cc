#include "server/keystore/token_admin.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/auth/token_access.h"
#include "server/auth/tokens.h"
#include "server/keystore/names.h"
#include "server/keystore/record_enums.h"
#include "server/keystore/token_records.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

constexpr size_t kMaxDescriptionBytes = 256;

absl::Status CheckDescription(const std::string& description) {
  if (description.size() <= kMaxDescriptionBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("token description must be at most ", kMaxDescriptionBytes, " bytes"));
}

// What every new token (tenant or admin) takes from its request: the description,
// the creation time `now`, and the expiry in whole seconds, at least one.
void StartToken(const TokenRequest& request, int64_t now, internal::Token& stored) {
  stored.set_description(request.description);
  stored.set_create_time_unix(now);
  if (request.ttl != absl::ZeroDuration()) {
    stored.set_ttl_seconds(std::max<int64_t>(1, absl::ToInt64Seconds(request.ttl)));
    stored.set_expire_time_unix(now + stored.ttl_seconds());
  }
}

// A token lifetime: zero (none) up to a century, so that now + it fits.
absl::Status CheckLifetime(absl::Duration lifetime, const char* field) {
  if (lifetime >= absl::ZeroDuration() && lifetime <= absl::Hours(24 * 36525)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("a token's ", field, " must be between 0 and 100 years"));
}

}  // namespace

absl::StatusOr<IssuedToken> TokenAdmin::IssueToken(const std::string& tenant,
                                                   const TokenRequest& request) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  if (absl::Status s = CheckDescription(request.description); !s.ok()) return s;
  if (absl::StatusOr<TokenAccess> access = TokenAccess::Create(request.scope); !access.ok()) {
    return access.status();
  }
  if (absl::Status s = CheckLifetime(request.ttl, "ttl"); !s.ok()) return s;
  if (absl::Status s = CheckLifetime(request.max_ttl, "max_ttl"); !s.ok()) return s;
  if (request.max_ttl != absl::ZeroDuration() &&
      (request.ttl == absl::ZeroDuration() || request.max_ttl < request.ttl)) {
    return absl::InvalidArgumentError(
        "max_ttl bounds renewals of an expiring token: it needs a ttl, and must be at "
        "least as long");
  }
  return StoreNewToken(tenant, [&](KeystoreTransaction&, internal::Token& stored) {
    const int64_t now = NowUnix();
    StartToken(request, now, stored);
    for (Operation operation : request.scope.operations) {
      stored.add_operations(static_cast<internal::Operation>(operation));
    }
    for (const std::string& pattern : request.scope.keys) stored.add_key_patterns(pattern);
    if (request.max_ttl != absl::ZeroDuration()) {
      stored.set_max_expire_time_unix(now + absl::ToInt64Seconds(request.max_ttl));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<IssuedToken> TokenAdmin::RenewToken(const std::string& tenant,
                                                   const std::string& token_id,
                                                   absl::Duration ttl) {
  if (absl::Status s = CheckLifetime(ttl, "ttl"); !s.ok()) return s;
  return StoreNewToken(tenant, [&](KeystoreTransaction& txn, internal::Token& successor) {
    // Read in the transaction: a revocation meanwhile makes the commit retry, and
    // the retry finds the token gone.
    absl::StatusOr<const internal::Token*> found = txn.FindToken(tenant, token_id);
    if (!found.ok()) return found.status();
    if (*found == nullptr) return absl::NotFoundError("this token was revoked");
    const internal::Token& token = **found;
    const int64_t now = NowUnix();
    if (token.expire_time_unix() == 0) {
      return absl::FailedPreconditionError("this token does not expire: there is nothing to renew");
    }
    if (token.expire_time_unix() <= now) return absl::UnauthenticatedError("token expired");
    int64_t lifetime = ttl == absl::ZeroDuration()
                           ? token.ttl_seconds()
                           : std::max<int64_t>(1, absl::ToInt64Seconds(ttl));
    if (lifetime <= 0) lifetime = token.expire_time_unix() - token.create_time_unix();
    int64_t expire = now + lifetime;
    if (token.max_expire_time_unix() != 0) {
      expire = std::min(expire, token.max_expire_time_unix());
    }
    if (token.max_expire_time_unix() != 0 &&
        token.expire_time_unix() >= token.max_expire_time_unix()) {
      return absl::FailedPreconditionError(
          "this token has reached its max_expire_time and cannot be renewed further; "
          "ask an admin for a new one");
    }
    successor.set_description(token.description());
    successor.set_create_time_unix(now);
    *successor.mutable_operations() = token.operations();
    *successor.mutable_key_patterns() = token.key_patterns();
    successor.set_ttl_seconds(token.ttl_seconds());
    successor.set_expire_time_unix(expire);
    successor.set_max_expire_time_unix(token.max_expire_time_unix());
    successor.set_renewed_from(token_id);
    return absl::OkStatus();
  });
}

absl::StatusOr<IssuedToken> TokenAdmin::StoreNewToken(
    const std::string& tenant,
    const std::function<absl::Status(KeystoreTransaction&, internal::Token&)>& fill) {
  auto token = GenerateToken();
  if (!token.ok()) return token.status();
  internal::Token stored;
  absl::Status s =
      keystore_.Update(RecordName::Token(tenant, token->id), [&](KeystoreTransaction& txn) {
        if (absl::Status s = txn.RequireTenant(tenant); !s.ok()) return s;
        // Conditions the commit on the id being unused (64 random bits: it always is).
        auto taken = txn.HasToken(tenant, token->id);
        if (!taken.ok()) return taken.status();
        if (*taken) return absl::AbortedError("token id collision");
        stored.Clear();
        if (absl::Status s = fill(txn, stored); !s.ok()) return s;
        stored.set_id(token->id);
        stored.set_sha256(token->sha256);
        txn.PutToken(tenant, stored);
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return IssuedToken{token->token, TokenInfoOf(stored)};
}

absl::Status TokenAdmin::RevokeToken(const std::string& tenant, const std::string& token_id) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  return DeleteToken(tenant, token_id);
}

absl::Status TokenAdmin::DeleteToken(const std::string& tenant, const std::string& token_id) {
  // Not echoed: a token pasted in place of its id must not reach a log.
  const absl::Status no_such_token =
      tenant == kAdminTokensTenant ? absl::NotFoundError("admin token with that id not found")
                                   : absl::NotFoundError(absl::StrCat(
                                         "token with that id not found in ", TenantRef(tenant)));
  if (token_id.empty() || token_id.size() > 64) return no_such_token;
  return keystore_.Update(RecordName::Token(tenant, token_id), [&](KeystoreTransaction& txn) {
    if (tenant != kAdminTokensTenant) {
      if (absl::Status s = txn.RequireTenant(tenant); !s.ok()) return s;
    }
    auto exists = txn.HasToken(tenant, token_id);
    if (!exists.ok()) return exists.status();
    if (!*exists) return no_such_token;
    txn.Delete(RecordName::Token(tenant, token_id));
    return absl::OkStatus();
  });
}

absl::StatusOr<IssuedToken> TokenAdmin::IssueAdminToken(const TokenRequest& request,
                                                        bool read_only) {
  if (absl::Status s = CheckDescription(request.description); !s.ok()) return s;
  if (absl::Status s = CheckLifetime(request.ttl, "ttl"); !s.ok()) return s;
  // The reserved tenant is made with the first admin token, in a commit of its own
  // (the etcd backend clears a new tenant's children in the commit that makes it).
  const std::string tenant(kAdminTokensTenant);
  absl::Status made = keystore_.Update(RecordName::Tenant(tenant), [&](KeystoreTransaction& txn) {
    auto exists = txn.HasTenant(tenant);
    if (!exists.ok()) return exists.status();
    if (!*exists) txn.PutTenant(tenant);
    return absl::OkStatus();
  });
  if (!made.ok()) return made;
  return StoreNewToken(tenant, [&](KeystoreTransaction&, internal::Token& stored) {
    StartToken(request, NowUnix(), stored);
    stored.set_read_only(read_only);
    return absl::OkStatus();
  });
}

absl::Status TokenAdmin::RevokeAdminToken(const std::string& token_id) {
  // A retirement marker stays: a retired bootstrap token comes back only as a new
  // one, from a restart with another --admin-token-file.
  if (absl::StartsWith(token_id, "bootstrap-")) {
    return absl::NotFoundError("admin token with that id not found");
  }
  return DeleteToken(std::string(kAdminTokensTenant), token_id);
}

absl::Status TokenAdmin::RetireBootstrapAdminToken(const std::string& sha256) {
  // Checked on this replica's view: enough to stop an operator locking everyone out
  // by mistake, which is what it is for.
  const absl::Time now = absl::Now();
  bool writer_remains = false;
  for (const TokenInfo& token : ListAdminTokens()) {
    writer_remains = writer_remains || (!token.read_only && token.expire_time > now);
  }
  if (!writer_remains) {
    return absl::FailedPreconditionError(
        "retiring the bootstrap admin token would leave no admin token that may change "
        "the keystore; issue one first (IssueAdminToken)");
  }
  const std::string id =
      absl::StrCat("bootstrap-", absl::BytesToHexString(absl::string_view(sha256).substr(0, 8)));
  absl::Status s = keystore_.Update(
      RecordName::Token(std::string(kAdminTokensTenant), id), [&](KeystoreTransaction& txn) {
        auto exists = txn.HasToken(std::string(kAdminTokensTenant), id);
        if (!exists.ok()) return exists.status();
        if (*exists) return absl::OkStatus();  // retired already
        internal::Token marker;
        marker.set_id(id);
        marker.set_sha256(sha256);
        marker.set_description("retired bootstrap admin token");
        marker.set_create_time_unix(NowUnix());
        marker.set_retired(true);
        txn.PutToken(std::string(kAdminTokensTenant), marker);
        return absl::OkStatus();
      });
  return s;
}

std::vector<TokenInfo> TokenAdmin::ListAdminTokens() const {
  std::vector<TokenInfo> out;
  std::shared_ptr<const Snapshot> snap = keystore_.snapshot();
  const TenantEntry* admin = snap->FindTenant(kAdminTokensTenant);
  if (admin == nullptr) return out;
  for (const TokenInfo& token : admin->tokens) {
    if (absl::StartsWith(token.id, "bootstrap-")) continue;  // retirement markers
    out.push_back(token);
  }
  return out;
}

int TokenAdmin::DeleteExpiredTokens(absl::Time now) {
  std::vector<std::pair<std::string, TokenInfo>> expired;
  for (const auto& [tenant_name, tenant] : keystore_.snapshot()->tenants()) {
    for (const TokenInfo& token : tenant->tokens) {
      if (token.expire_time + kExpiredTokenRetention <= now) {
        expired.emplace_back(tenant_name, token);
      }
    }
  }
  int deleted = 0;
  for (const auto& [tenant, token] : expired) {
    absl::Status status = DeleteToken(tenant, token.id);
    if (absl::IsNotFound(status)) continue;  // another replica was first
    if (!status.ok()) {
      Log("expired_token_delete_failed", "warning")
          .Add("tenant", tenant)
          .Add("token_id", token.id)
          .Add("detail", status.ToString());
      continue;
    }
    ++deleted;
    Log("expired_token_deleted")
        .Add("tenant", tenant)
        .Add("token_id", token.id)
        .Add("expire_time",
             absl::FormatTime(absl::RFC3339_sec, token.expire_time, absl::UTCTimeZone()));
  }
  return deleted;
}

}  // namespace sealbox::server
