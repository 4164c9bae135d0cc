#include "server/dataplane/request_checks.h"

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

absl::Status CheckRequest(const Caller& caller, Operation operation, const std::string& key,
                          const std::string& aad, size_t size, size_t limit) {
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
