// What a tenant or key name may be. Error messages never echo the name back (it
// may be long or binary); they say what is allowed.
#ifndef SEALBOX_SERVER_KEYSTORE_NAMES_H_
#define SEALBOX_SERVER_KEYSTORE_NAMES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sealbox::server {

// 1-64 of [a-z0-9_-], starting with a letter.
absl::Status ValidateTenantName(absl::string_view name);

// The reserved tenant whose tokens are the admin tokens issued through the admin
// plane: no tenant can be named so (names start with a letter), and admin tokens
// replicate, expire and are revoked through the same records as tenant tokens.
inline constexpr absl::string_view kAdminTokensTenant = "_admin";

// 1-64 of [A-Za-z0-9_.-].
absl::Status ValidateKeyName(absl::string_view name);

// How admin errors name what they are about, in one form: `tenant "acme"` and
// `key "acme/orders"`. Only for names already validated (plain text).
std::string TenantRef(absl::string_view tenant);
std::string KeyRef(absl::string_view tenant, absl::string_view key);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_NAMES_H_
