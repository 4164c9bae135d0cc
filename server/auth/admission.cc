#include "server/auth/admission.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sealbox::server {
namespace {

constexpr absl::string_view kReadingAdminMethods[] = {"ListTenants", "ListKeys", "GetKey",
                                                      "ListAdminTokens", "GetKekStatus"};

}  // namespace

void AuditCaller(const Caller& caller, AuditRecord& record) {
  record.tenant = caller.tenant;
  if (caller.grant != nullptr) {
    record.credential = "token";
    record.token_id = caller.grant->id;
  } else {
    record.credential = "certificate";
  }
}

bool AdminMethodOnlyReads(absl::string_view method) {
  for (absl::string_view reader : kReadingAdminMethods) {
    if (method == reader) return true;
  }
  return false;
}

absl::Status AdminMayCall(const Principal& caller, absl::string_view method) {
  if (caller.grant == nullptr || !caller.grant->read_only || AdminMethodOnlyReads(method)) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(
      absl::StrCat("this admin token is read-only: it may call ListTenants, ListKeys, GetKey, "
                   "ListAdminTokens and GetKekStatus, not ",
                   method));
}

absl::StatusOr<Caller> Admission::Authenticate(const grpc::CallbackServerContext& context) const {
  // Before the keystore has loaded no token is known, and past --max-staleness a
  // revoked one may still look valid: say so, rather than judge the caller.
  if (absl::Status serving = keystore_->Serving(); !serving.ok()) return serving;
  std::shared_ptr<const Snapshot> snapshot = keystore_->snapshot();
  absl::StatusOr<Principal> principal = authenticator_->Identify(context, snapshot);
  if (!principal.ok()) return principal.status();
  return Caller{CallSnapshot(std::move(snapshot), keystore_), std::move(principal->tenant),
                std::move(principal->grant)};
}

absl::StatusOr<Principal> Admission::Admin(const grpc::CallbackServerContext& context) const {
  // A stale keystore may not know of a revoked admin token: refuse before judging one.
  if (absl::Status serving = keystore_->Serving(); !serving.ok()) return serving;
  return authenticator_->Admin(context, keystore_->snapshot());
}

}  // namespace sealbox::server
