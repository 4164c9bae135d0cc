#include "server/keystore/sealing_epoch.h"

#include <openssl/rand.h>

#include <utility>

namespace sealbox::server {
namespace {

crypto::EpochId RandomEpochId() {
  crypto::EpochId id;
  RAND_bytes(id.data(), static_cast<int>(id.size()));
  return id;
}

}  // namespace

SealingEpoch::SealingEpoch(std::shared_ptr<const crypto::SecretBytes> material,
                           crypto::KeyContext context)
    : material_(std::move(material)), context_(std::move(context)) {}

absl::StatusOr<crypto::EpochSubkey*> SealingEpoch::Current() {
  crypto::EpochSubkey* epoch = current_.load(std::memory_order_acquire);
  if (epoch != nullptr && !epoch->NearlyExhausted()) return epoch;
  absl::MutexLock lock(&mutex_);
  // Another sealer may have replaced it while this one waited.
  epoch = current_.load(std::memory_order_acquire);
  if (epoch != nullptr && !epoch->NearlyExhausted()) return epoch;
  absl::StatusOr<std::unique_ptr<crypto::EpochSubkey>> fresh =
      first_counter_ == 0
          ? crypto::EpochSubkey::DeriveNewEpoch(material_->span(), context_)
          : crypto::EpochSubkey::DeriveForTesting(material_->span(), context_,
                                                  RandomEpochId(), first_counter_);
  if (!fresh.ok()) return fresh.status();
  epochs_.push_back(*std::move(fresh));
  current_.store(epochs_.back().get(), std::memory_order_release);
  return epochs_.back().get();
}

const crypto::EpochSubkey* SealingEpoch::CurrentIf(
    const crypto::EpochId& epoch_id) const {
  const crypto::EpochSubkey* epoch = current_.load(std::memory_order_acquire);
  return epoch != nullptr && epoch->epoch_id() == epoch_id ? epoch : nullptr;
}

}  // namespace sealbox::server
