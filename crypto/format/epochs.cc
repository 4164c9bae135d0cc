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

SealingEpoch::SealingEpoch(std::shared_ptr<const SecretBytes> material, KeyContext context)
    : material_(std::move(material)), context_(std::move(context)) {}

absl::StatusOr<std::shared_ptr<EpochSubkey>> SealingEpoch::Current() {
  {
    absl::ReaderMutexLock lock(&mutex_);
    if (current_ != nullptr && !current_->NearlyExhausted()) {
      MarkUsed();
      return current_;
    }
  }
  absl::MutexLock lock(&mutex_);
  // Another sealer may have derived it while this one waited.
  if (current_ == nullptr || current_->NearlyExhausted()) {
    absl::StatusOr<std::unique_ptr<EpochSubkey>> fresh =
        first_counter_ == 0 ? EpochSubkey::DeriveNewEpoch(material_->span(), context_)
                            : EpochSubkey::DeriveForTesting(material_->span(), context_,
                                                            RandomEpochId(), first_counter_);
    if (!fresh.ok()) return fresh.status();
    // The one it replaces lives on in the sealers that still hold it.
    current_ = *std::move(fresh);
  }
  MarkUsed();
  return current_;
}

std::shared_ptr<const EpochSubkey> SealingEpoch::CurrentIf(const EpochId& epoch_id) const {
  absl::ReaderMutexLock lock(&mutex_);
  if (current_ == nullptr || current_->epoch_id() != epoch_id) return nullptr;
  MarkUsed();
  return current_;
}

bool SealingEpoch::DropIfIdle() {
  absl::MutexLock lock(&mutex_);
  if (current_ == nullptr) return false;
  if (used_.exchange(false, std::memory_order_relaxed)) return false;
  current_.reset();  // wiped when its last holder lets go
  return true;
}

bool SealingEpoch::warm() const {
  absl::ReaderMutexLock lock(&mutex_);
  return current_ != nullptr;
}

absl::StatusOr<std::shared_ptr<const EpochSubkey>> EpochCache::Get(
    absl::Span<const uint8_t> material, const KeyContext& context, const EpochId& epoch_id) {
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
