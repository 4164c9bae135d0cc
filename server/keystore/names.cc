#include "server/keystore/names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace sealbox::server {

inline constexpr size_t kMaxNameBytes = 64;

absl::Status ValidateTenantName(absl::string_view name) {
  bool ok = !name.empty() && name.size() <= kMaxNameBytes && absl::ascii_islower(name[0]);
  for (char c : name) {
    ok = ok && (absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_' || c == '-');
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        "tenant name must be 1-64 of [a-z0-9_-], starting with a letter");
  }
  return absl::OkStatus();
}

absl::Status ValidateKeyName(absl::string_view name) {
  bool ok = !name.empty() && name.size() <= kMaxNameBytes;
  for (char c : name) {
    ok = ok && (absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-');
  }
  if (!ok) return absl::InvalidArgumentError("key name must be 1-64 of [A-Za-z0-9_.-]");
  return absl::OkStatus();
}

std::string TenantRef(absl::string_view tenant) { return absl::StrCat("tenant \"", tenant, "\""); }

std::string KeyRef(absl::string_view tenant, absl::string_view key) {
  return absl::StrCat("key \"", tenant, "/", key, "\"");
}

}  // namespace sealbox::server
