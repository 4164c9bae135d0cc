#include "server/custody/sealed_kek_source.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/custody/sealed_kek.h"

namespace sealbox::server::custody {

absl::StatusOr<std::shared_ptr<const KekRing>> SealedKekSource::Adopt(
    const SealedKekStore::Stored& stored) {
  absl::MutexLock lock(&mu_);
  if (ring_ != nullptr && stored.bytes == bytes_) {
    if (ring_->sealed_revision == stored.revision) return ring_;
    // The same KEKs at another revision (written again): a ring that says so.
    std::vector<Kek> previous;
    for (const Kek& kek : ring_->previous) previous.push_back(kek.Clone());
    ring_ = std::make_shared<const KekRing>(ring_->current.Clone(), std::move(previous),
                                            stored.revision);
    return ring_;
  }
  absl::StatusOr<std::shared_ptr<const KekRing>> ring =
      UnsealKeks(*root_key_, stored.bytes, store_->Describe(), stored.revision);
  if (!ring.ok()) return ring.status();
  bytes_ = stored.bytes;
  ring_ = *ring;
  return ring;
}

absl::StatusOr<std::shared_ptr<const KekRing>> SealedKekSource::Current() {
  absl::StatusOr<std::optional<SealedKekStore::Stored>> stored = store_->Read();
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the sealed KEK at ", store_->Describe(), " is gone"));
  }
  return Adopt(**stored);
}

}  // namespace sealbox::server::custody
