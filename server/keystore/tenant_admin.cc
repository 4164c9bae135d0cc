#include "server/keystore/tenant_admin.h"

#include "absl/strings/str_cat.h"
#include "server/auth/tokens.h"
#include "server/keystore/names.h"

namespace sealbox::server {

absl::StatusOr<TenantInfo> TenantAdmin::CreateTenant(const std::string& name) {
  if (absl::Status s = ValidateTenantName(name); !s.ok()) return s;
  absl::Status s = keystore_.Update(RecordName::Tenant(name), [&](KeystoreTransaction& txn) {
    auto exists = txn.HasTenant(name);
    if (!exists.ok()) return exists.status();
    if (*exists) {
      return absl::AlreadyExistsError(absl::StrCat(TenantRef(name), " already exists"));
    }
    txn.PutTenant(name);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return TenantInfo{name, {}, {}};
}

absl::Status TenantAdmin::DeleteTenant(const std::string& name) {
  if (absl::Status s = ValidateTenantName(name); !s.ok()) return s;
  return keystore_.Update(RecordName::Tenant(name), [&](KeystoreTransaction& txn) {
    if (absl::Status s = txn.RequireTenant(name); !s.ok()) return s;
    txn.Delete(RecordName::Tenant(name));
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<TenantInfo>> TenantAdmin::ListTenants() const {
  std::vector<TenantInfo> out;
  for (const auto& [name, tenant] : keystore_.snapshot()->tenants()) {
    if (name != kAdminTokensTenant) out.push_back(tenant->Info());
  }
  return out;
}

}  // namespace sealbox::server
