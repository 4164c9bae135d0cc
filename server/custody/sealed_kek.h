// The keystore's KEKs sealed by the root key (root_key.h), as kept beside the keystore
// (sealed_kek_store.h): the proto sealbox.internal.SealedKeks (docs/FORMAT.md). It
// holds the current KEK and, while a KEK rotation is under way, the ones before it.
#ifndef SEALBOX_SERVER_CUSTODY_SEALED_KEK_H_
#define SEALBOX_SERVER_CUSTODY_SEALED_KEK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/custody/root_key.h"
#include "server/keystore/kek.h"
#include "server/keystore/kek_ring.h"

namespace sealbox::server::custody {

// What a sealed KEK says without unsealing: for status, logs and the audit.
struct SealedKekInfo {
  std::string fingerprint;  // the current KEK's, hex
  absl::Time created = absl::InfinitePast();
  int previous = 0;  // KEKs records may still be under: a rotation is unfinished
};

// A new sealed KEK holding only `kek`, made `created`.
absl::StatusOr<std::string> SealKek(RootKey& root, const Kek& kek, absl::Time created);

// `sealed` with `next` as its current KEK and its current KEK first among the
// previous ones: the start of a KEK rotation. The KEKs already sealed are copied, not
// unsealed.
absl::StatusOr<std::string> SealNextKek(RootKey& root, const Kek& next, absl::Time created,
                                        absl::string_view sealed);

// `sealed` without its previous KEKs: the end of a rotation.
absl::StatusOr<std::string> DropPreviousKeks(absl::string_view sealed);

// Unseals every KEK in `sealed` (one root-key call each) into a ring whose
// sealed_revision is `revision`, checking each against its fingerprint. `where`
// names where the bytes were read, for messages. DATA_LOSS: not a sealed KEK, or
// damaged; FAILED_PRECONDITION: the root key cannot open it (another key sealed it);
// UNAVAILABLE: the root key cannot be used.
absl::StatusOr<std::shared_ptr<const KekRing>> UnsealKeks(RootKey& root, absl::string_view sealed,
                                                          absl::string_view where,
                                                          int64_t revision);

// What `sealed` says, without unsealing; DATA_LOSS when it is not a sealed KEK.
absl::StatusOr<SealedKekInfo> InfoOf(absl::string_view sealed, absl::string_view where);

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_SEALED_KEK_H_
