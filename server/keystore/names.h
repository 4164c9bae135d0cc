// What a tenant or key name may be. Error messages never echo the name back (it
// may be long or binary); they say what is allowed.
#ifndef SEALBOX_SERVER_KEYSTORE_NAMES_H_
#define SEALBOX_SERVER_KEYSTORE_NAMES_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sealbox::server {

// 1-64 of [a-z0-9_-], starting with a letter.
absl::Status ValidateTenantName(absl::string_view name);

// 1-64 of [A-Za-z0-9_.-].
absl::Status ValidateKeyName(absl::string_view name);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_NAMES_H_
