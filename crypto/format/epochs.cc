#include "crypto/format/epochs.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <utility>

namespace sealbox::crypto {
namespace {

EpochId RandomEpochId() {
  EpochId id;
  RAND_bytes(id.data(), static_cast<int>(id.size()));
  return id;
}

bool SameBytes(const SecretBytes& a, const SecretBytes& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
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

Epochs::Epochs(Limits limits) : limits_(limits), cache_(limits.max_cached) {
  if (limits_.idle_sweep > absl::ZeroDuration()) {
    sweeper_ = std::thread([this] { SweepUntilStopped(); });
  }
}

Epochs::~Epochs() {
  stopping_.Notify();
  if (sweeper_.joinable()) sweeper_.join();
}

std::shared_ptr<SealingEpoch> Epochs::ForSealing(const KeyContext& context,
                                                 std::shared_ptr<const SecretBytes> material,
                                                 const std::shared_ptr<SealingEpoch>& previous) {
  if (previous != nullptr && previous->version() == context.version &&
      SameBytes(previous->material(), *material)) {
    return previous;
  }
  auto sealing = std::make_shared<SealingEpoch>(std::move(material), context);
  absl::MutexLock lock(&mutex_);
  // Without sweeps (idle_sweep zero) the list is pruned here instead, whenever it has
  // doubled, so rotations cannot grow it without bound.
  if (sealing_.size() >= 2 * pruned_size_ + 64) PruneReleased();
  sealing_.push_back(sealing);
  return sealing;
}

void Epochs::PruneReleased() {
  auto gone = [](const std::weak_ptr<SealingEpoch>& e) { return e.expired(); };
  sealing_.erase(std::remove_if(sealing_.begin(), sealing_.end(), gone), sealing_.end());
  pruned_size_ = sealing_.size();
}

absl::StatusOr<std::shared_ptr<const EpochSubkey>> Epochs::ForOpening(
    const SealingEpoch* sealing, absl::Span<const uint8_t> material, const KeyContext& context,
    const EpochId& epoch_id) {
  if (sealing != nullptr && sealing->version() == context.version) {
    if (std::shared_ptr<const EpochSubkey> own = sealing->CurrentIf(epoch_id)) return own;
  }
  return cache_.Get(material, context, epoch_id);
}

size_t Epochs::DropIdle() {
  std::vector<std::shared_ptr<SealingEpoch>> held;
  {
    absl::MutexLock lock(&mutex_);
    PruneReleased();
    held.reserve(sealing_.size());
    for (const std::weak_ptr<SealingEpoch>& e : sealing_) {
      if (std::shared_ptr<SealingEpoch> live = e.lock()) held.push_back(std::move(live));
    }
  }
  // Outside the lock: each drop takes its epoch's own lock.
  size_t dropped = 0;
  for (const std::shared_ptr<SealingEpoch>& sealing : held) {
    if (sealing->DropIfIdle()) ++dropped;
  }
  return dropped;
}

void Epochs::SweepUntilStopped() {
  while (!stopping_.WaitForNotificationWithTimeout(limits_.idle_sweep)) DropIdle();
}

}  // namespace sealbox::crypto
