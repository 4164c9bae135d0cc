#include "server/keystore/kek_ring.h"

#include <utility>

#include "absl/time/clock.h"

namespace sealbox::server {

const Kek* KekRing::Find(const std::function<bool(const Kek&)>& wrote) const {
  if (wrote(current)) return &current;
  for (const Kek& kek : previous) {
    if (wrote(kek)) return &kek;
  }
  return nullptr;
}

absl::StatusOr<std::shared_ptr<const KekRing>> GivenKeks(std::optional<Kek> kek,
                                                         std::optional<Kek> previous) {
  if (!kek.has_value()) return absl::InvalidArgumentError("no KEK");
  std::vector<Kek> older;
  if (previous.has_value()) older.push_back(*std::move(previous));
  return std::make_shared<const KekRing>(*std::move(kek), std::move(older));
}

std::shared_ptr<const KekRing> StoreKeks::ring() const {
  absl::MutexLock lock(&mu_);
  return ring_;
}

void StoreKeks::Set(std::shared_ptr<const KekRing> ring) {
  absl::MutexLock lock(&mu_);
  if (ring->sealed_revision > 0 && ring->sealed_revision < ring_->sealed_revision) return;
  ring_ = std::move(ring);
}

KekRef StoreKeks::Current() const {
  std::shared_ptr<const KekRing> ring = this->ring();
  return KekRef(ring, &ring->current);
}

KekRef StoreKeks::For(const std::function<bool(const Kek&)>& wrote) {
  std::shared_ptr<const KekRing> ring = this->ring();
  if (const Kek* kek = ring->Find(wrote)) return KekRef(ring, kek);
  if (source_ == nullptr) return nullptr;
  {
    // Callers that miss together (a rotation seen by many reads at once) share one
    // question to the source; what it answers is in ring_ when they wake.
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](bool* asking) { return !*asking; }, &asking_source_));
    if (ring_ != ring) {
      if (const Kek* kek = ring_->Find(wrote)) return KekRef(ring_, kek);
    }
    // A record under a KEK nobody knows must not cost an HSM call each time it is read.
    if (absl::Now() - last_miss_refresh_ < absl::Seconds(1)) return nullptr;
    last_miss_refresh_ = absl::Now();
    asking_source_ = true;
  }
  absl::StatusOr<std::shared_ptr<const KekRing>> fresh = Refresh();
  {
    absl::MutexLock lock(&mu_);
    asking_source_ = false;
  }
  if (!fresh.ok()) return nullptr;
  if (const Kek* kek = (*fresh)->Find(wrote)) return KekRef(*fresh, kek);
  return nullptr;
}

absl::StatusOr<std::shared_ptr<const KekRing>> StoreKeks::Refresh() {
  if (source_ == nullptr) return ring();
  absl::StatusOr<std::shared_ptr<const KekRing>> fresh = source_->Current();
  if (!fresh.ok()) return fresh.status();
  Set(*fresh);
  return fresh;
}

}  // namespace sealbox::server
