// Tenants: made, deleted (with everything in them) and listed.
#ifndef SEALBOX_SERVER_KEYSTORE_TENANT_ADMIN_H_
#define SEALBOX_SERVER_KEYSTORE_TENANT_ADMIN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/keystore/info.h"
#include "server/keystore/keystore_transaction.h"

namespace sealbox::server {

// Errors as for every admin call (keystore.h): INVALID_ARGUMENT for a bad name,
// NOT_FOUND, ALREADY_EXISTS, UNAVAILABLE while the store cannot be reached.
class TenantAdmin {
 public:
  explicit TenantAdmin(KeystoreWriter& keystore) : keystore_(keystore) {}
  TenantAdmin(const TenantAdmin&) = delete;
  TenantAdmin& operator=(const TenantAdmin&) = delete;

  absl::StatusOr<TenantInfo> CreateTenant(const std::string& name);
  // Deletes the tenant with its keys and tokens, in one commit.
  absl::Status DeleteTenant(const std::string& name);
  // Every tenant but the reserved one that holds admin tokens.
  absl::StatusOr<std::vector<TenantInfo>> ListTenants() const;

 private:
  KeystoreWriter& keystore_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_TENANT_ADMIN_H_
