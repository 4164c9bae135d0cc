// The keystore's KEK sealed by the root key (root_key.h), as kept beside the keystore
// (sealed_kek_store.h): the proto sealbox.internal.SealedKeks (docs/FORMAT.md).
#ifndef SEALBOX_SERVER_CUSTODY_SEALED_KEK_H_
#define SEALBOX_SERVER_CUSTODY_SEALED_KEK_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/custody/root_key.h"
#include "server/keystore/kek.h"

namespace sealbox::server::custody {

// Seals `kek` under `root`: the bytes to keep beside the keystore.
absl::StatusOr<std::string> SealKek(RootKey& root, const Kek& kek);

// Unseals what SealKek made, with one call to the root key, and checks that the KEK
// it gives is the one the fingerprint names. `where` names where the bytes were read,
// for messages. DATA_LOSS: not a sealed KEK, or damaged; FAILED_PRECONDITION: the root
// key cannot open it (another key sealed it); UNAVAILABLE: the root key cannot be used.
absl::StatusOr<Kek> UnsealKek(RootKey& root, absl::string_view sealed, absl::string_view where);

// The fingerprint a sealed KEK records, in hex, without unsealing it: which KEK the
// store holds, for logs and the audit. Empty when the bytes are not a sealed KEK.
std::string SealedFingerprintHex(absl::string_view sealed);

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_SEALED_KEK_H_
