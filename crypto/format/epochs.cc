#include "crypto/format/epochs.h"

#include <openssl/rand.h>

#include <utility>

namespace sealbox::crypto {
namespace {

EpochId RandomEpochId() {
  EpochId id;
  RAND_bytes(id.data(), static_cast<int>(id.size()));
  return id;
}

}  // namespace

SealingEpoch::SealingEpoch(std::shared_ptr<const SecretBytes> material,
                           KeyContext context)
    : material_(std::move(material)), context_(std::move(context)) {}

absl::StatusOr<EpochSubkey*> SealingEpoch::Current() {
  EpochSubkey* epoch = current_.load(std::memory_order_acquire);
  if (epoch != nullptr && !epoch->NearlyExhausted()) return epoch;
  absl::MutexLock lock(&mutex_);
  // Another sealer may have replaced it while this one waited.
  epoch = current_.load(std::memory_order_acquire);
  if (epoch != nullptr && !epoch->NearlyExhausted()) return epoch;
  absl::StatusOr<std::unique_ptr<EpochSubkey>> fresh =
      first_counter_ == 0
          ? EpochSubkey::DeriveNewEpoch(material_->span(), context_)
          : EpochSubkey::DeriveForTesting(material_->span(), context_,
                                                  RandomEpochId(), first_counter_);
  if (!fresh.ok()) return fresh.status();
  epochs_.push_back(*std::move(fresh));
  current_.store(epochs_.back().get(), std::memory_order_release);
  return epochs_.back().get();
}

const EpochSubkey* SealingEpoch::CurrentIf(
    const EpochId& epoch_id) const {
  const EpochSubkey* epoch = current_.load(std::memory_order_acquire);
  return epoch != nullptr && epoch->epoch_id() == epoch_id ? epoch : nullptr;
}

absl::StatusOr<std::shared_ptr<const EpochSubkey>> EpochCache::Get(
    absl::Span<const uint8_t> material, const KeyContext& context,
    const EpochId& epoch_id) {
  Entry entry{context.tenant, context.key_name, context.version, epoch_id};
  {
    absl::MutexLock lock(&mutex_);
    auto it = subkeys_.find(entry);
    if (it != subkeys_.end()) return it->second;
  }
  // Derived outside the lock: two callers may both derive, and the first one kept wins.
  absl::StatusOr<std::unique_ptr<EpochSubkey>> derived =
      EpochSubkey::Derive(material, context, epoch_id);
  if (!derived.ok()) return derived.status();
  std::shared_ptr<const EpochSubkey> subkey = *std::move(derived);
  absl::MutexLock lock(&mutex_);
  auto [it, inserted] = subkeys_.emplace(entry, std::move(subkey));
  if (inserted) {
    insertion_order_.push_back(entry);
    if (subkeys_.size() > capacity_) {
      subkeys_.erase(insertion_order_.front());
      insertion_order_.pop_front();
    }
  }
  return it->second;
}

}  // namespace sealbox::crypto
