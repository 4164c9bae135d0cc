// What every data-plane request is checked for once its caller is admitted
// (server/auth/admission.h), before any work: the key name, the caller's permission
// for the operation on that key, the associated data's size and the message's size.
#ifndef SEALBOX_SERVER_DATAPLANE_REQUEST_CHECKS_H_
#define SEALBOX_SERVER_DATAPLANE_REQUEST_CHECKS_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "server/auth/admission.h"

namespace sealbox::server {

// One request of a call (a batch has several): `size` is the plaintext or
// ciphertext it carries, `limit` its unary bound (a stream's start message passes 0
// and 0). Errors, in this order: INVALID_ARGUMENT for a bad key name (never echoed),
// PERMISSION_DENIED when the caller's token may not do `operation` on `key`,
// INVALID_ARGUMENT for oversized associated data, RESOURCE_EXHAUSTED for an
// oversized message.
absl::Status CheckRequest(const Caller& caller, Operation operation, const std::string& key,
                          const std::string& aad, size_t size, size_t limit);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_REQUEST_CHECKS_H_
