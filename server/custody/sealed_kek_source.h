// The KEKs of a keystore whose KEK a root key seals (kek_ring.h's KekSource): the
// sealed KEK read again from its store whenever a storage asks, and unsealed only
// when it changed (a KEK rotation, here or on another replica).
#ifndef SEALBOX_SERVER_CUSTODY_SEALED_KEK_SOURCE_H_
#define SEALBOX_SERVER_CUSTODY_SEALED_KEK_SOURCE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/custody/root_key.h"
#include "server/custody/sealed_kek_store.h"
#include "server/keystore/kek_ring.h"

namespace sealbox::server::custody {

class SealedKekSource final : public KekSource {
 public:
  // Both must outlive the source.
  SealedKekSource(RootKey* root_key, SealedKekStore* store) : root_key_(root_key), store_(store) {}

  // The ring of what the store holds (`stored`, as it returned it), unsealed.
  absl::StatusOr<std::shared_ptr<const KekRing>> Adopt(const SealedKekStore::Stored& stored);

  absl::StatusOr<std::shared_ptr<const KekRing>> Current() override;

 private:
  RootKey* const root_key_;
  SealedKekStore* const store_;
  absl::Mutex mu_;
  std::string bytes_ ABSL_GUARDED_BY(mu_);  // what ring_ was unsealed from
  std::shared_ptr<const KekRing> ring_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_SEALED_KEK_SOURCE_H_
