#include "server/keystore/keystore_transaction.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/keystore/names.h"

namespace sealbox::server {

absl::Status TenantNotFound(const std::string& tenant) {
  return absl::NotFoundError(absl::StrCat(TenantRef(tenant), " not found"));
}

absl::Status KeyNotFound(const std::string& tenant, const std::string& key) {
  return absl::NotFoundError(absl::StrCat(KeyRef(tenant, key), " not found"));
}

int64_t NowUnix() { return absl::ToUnixSeconds(absl::Now()); }

}  // namespace sealbox::server
