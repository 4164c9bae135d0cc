#include "server/dataplane/admission.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/dataplane/data_plane_limits.h"
#include "server/keystore/names.h"

namespace sealbox::server {
namespace {

absl::Status CheckAssociatedData(const std::string& aad) {
  if (aad.size() <= kMaxAssociatedDataBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("associated data of ", aad.size(), " bytes exceeds the limit of ",
                   kMaxAssociatedDataBytes / 1024, " KiB (", kMaxAssociatedDataBytes, " bytes)"));
}

absl::Status TooLarge(size_t size, size_t limit) {
  return absl::ResourceExhaustedError(absl::StrCat("message of ", size,
                                                   " bytes exceeds the unary limit of ", limit,
                                                   " bytes; use SealStream/OpenStream"));
}

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

absl::StatusOr<Caller> Admission::Authenticate(const grpc::CallbackServerContext& context) const {
  // Before the keystore has loaded no token is known, and past --max-staleness a
  // revoked one may still look valid: say so, rather than judge the caller.
  if (absl::Status serving = keystore_->Serving(); !serving.ok()) return serving;
  Caller caller{keystore_->snapshot(), {}, {}};
  absl::StatusOr<Principal> principal = authenticator_->Identify(context, caller.snapshot);
  if (!principal.ok()) return principal.status();
  caller.tenant = std::move(principal->tenant);
  caller.grant = std::move(principal->grant);
  return caller;
}

absl::Status Admission::CheckRequest(const Caller& caller, Operation operation,
                                     const std::string& key, const std::string& aad, size_t size,
                                     size_t limit) {
  // The admin plane's rule: a name no key can have is refused before any lookup, and
  // never echoed.
  if (absl::Status s = ValidateKeyName(key); !s.ok()) return s;
  if (caller.grant != nullptr) {
    if (absl::Status s = caller.grant->access.Check(operation, key); !s.ok()) return s;
  }
  if (absl::Status s = CheckAssociatedData(aad); !s.ok()) return s;
  if (size > limit) return TooLarge(size, limit);
  return absl::OkStatus();
}

}  // namespace sealbox::server
