// Epoch subkeys (unary.h's EpochSubkey, docs/FORMAT.md "Epochs") as a server holds
// them, all in one owner: Epochs hands each key version its SealingEpoch (the epoch it
// seals under), finds the subkey that opens any epoch (its own, or one of the others
// it keeps in an EpochCache: other replicas' and earlier processes'), and drops
// sealing epochs left idle, within the limits it is given. The keystore owns one;
// its snapshots hold the handles it gave out, and the engine asks it to open.
#ifndef SEALBOX_CRYPTO_FORMAT_EPOCHS_H_
#define SEALBOX_CRYPTO_FORMAT_EPOCHS_H_

#include <atomic>
#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "crypto/format/unary.h"
#include "crypto/secret/secret_bytes.h"

namespace sealbox::crypto {

// Derived on first use, so loading a keystore of many keys expands none of them;
// replaced by a fresh epoch once it has sealed 2^31 messages, long before its nonce
// counter runs out; and dropped when idle (DropIfIdle), so that a keystore's memory
// follows the keys in use rather than every key ever used. A dropped or replaced
// epoch lives on while a caller holds it. Sealers share a reader lock; the rare
// derivation and drop take it exclusively.
class SealingEpoch {
 public:
  SealingEpoch(std::shared_ptr<const SecretBytes> material, KeyContext context);

  // The epoch to seal with now, derived if there is none yet (first use, or after a
  // drop) or the current one is nearly exhausted. Counts as use.
  absl::StatusOr<std::shared_ptr<EpochSubkey>> Current();

  // The current epoch if it has been derived and is `epoch_id`, else nullptr: the
  // fast path for opening what this process sealed. A hit counts as use.
  std::shared_ptr<const EpochSubkey> CurrentIf(const EpochId& epoch_id) const;

  // The idle-time policy, for a periodic sweep (Epochs::DropIdle):
  // drops the current epoch and returns true when it has not been used since the
  // previous call; otherwise forgets that it was used and returns false. So an
  // epoch idle for two sweep periods is always gone, one in use never is. The next
  // Seal derives a new epoch (a new random epoch id), an HKDF and a key expansion.
  bool DropIfIdle();

  // True while an epoch is derived and not dropped.
  bool warm() const;

  // Test hook: epochs derived from now on start their counter here, so a test can
  // reach the renewal point without sealing 2^31 messages.
  void StartCountersAtForTesting(uint64_t counter) { first_counter_ = counter; }

  const SecretBytes& material() const { return *material_; }
  uint32_t version() const { return context_.version; }

 private:
  void MarkUsed() const {
    // Read first: a key sealing all the time writes the flag once per sweep, not
    // once per Seal.
    if (!used_.load(std::memory_order_relaxed)) {
      used_.store(true, std::memory_order_relaxed);
    }
  }

  const std::shared_ptr<const SecretBytes> material_;
  const KeyContext context_;
  uint64_t first_counter_ = 0;
  mutable absl::Mutex mutex_;
  std::shared_ptr<EpochSubkey> current_ ABSL_GUARDED_BY(mutex_);
  // Set by each use, cleared by DropIfIdle. Written under the reader lock (hence
  // atomic), cleared under the writer lock, so a drop never races a use.
  mutable std::atomic<bool> used_{false};
};

// The subkeys of epochs other than a key's own sealing one, derived once on a miss
// and kept up to `capacity`, the oldest dropped first.
class EpochCache {
 public:
  explicit EpochCache(size_t capacity) : capacity_(capacity) {}

  absl::StatusOr<std::shared_ptr<const EpochSubkey>> Get(absl::Span<const uint8_t> material,
                                                         const KeyContext& context,
                                                         const EpochId& epoch_id);

 private:
  using Entry = std::tuple<std::string, std::string, uint32_t, EpochId>;
  const size_t capacity_;
  absl::Mutex mutex_;
  std::map<Entry, std::shared_ptr<const EpochSubkey>> subkeys_ ABSL_GUARDED_BY(mutex_);
  std::list<Entry> insertion_order_ ABSL_GUARDED_BY(mutex_);
};

// The owner of a process's (or a keystore's) epochs and their limits.
class Epochs {
 public:
  struct Limits {
    // Subkeys kept for opening epochs other than the sealing ones, the oldest
    // dropped first.
    size_t max_cached = 4096;
    // How often sealing epochs left idle are dropped (DropIdle), by a thread of this
    // object's own; one unused for two periods is gone. Zero: never (call DropIdle).
    absl::Duration idle_sweep = absl::ZeroDuration();
  };

  explicit Epochs(Limits limits);
  Epochs() : Epochs(Limits{}) {}
  ~Epochs();
  Epochs(const Epochs&) = delete;
  Epochs& operator=(const Epochs&) = delete;

  // The sealing epoch of `context` (a key's primary version) under `material`:
  // `previous` (the one that key had before) while it is for the same version and
  // the same material, else a new one. So a change elsewhere in the keystore does not
  // restart a key's epoch, and a key made again under the same name (a tenant
  // deleted and created anew: version 1 again, other material) never seals under the
  // old material.
  std::shared_ptr<SealingEpoch> ForSealing(const KeyContext& context,
                                           std::shared_ptr<const SecretBytes> material,
                                           const std::shared_ptr<SealingEpoch>& previous);

  // The subkey that opens `epoch_id` of `context` (a key version with `material`):
  // `sealing`'s own while it is that version's current epoch (most ciphertexts come
  // back to the process that sealed them: no lookup), else the cache's, derived on a
  // miss. `sealing` may be null.
  absl::StatusOr<std::shared_ptr<const EpochSubkey>> ForOpening(const SealingEpoch* sealing,
                                                                absl::Span<const uint8_t> material,
                                                                const KeyContext& context,
                                                                const EpochId& epoch_id);

  // One sweep of the idle-time policy (SealingEpoch::DropIfIdle) over every sealing
  // epoch handed out and still held: returns how many it dropped.
  size_t DropIdle();

  // How many sealing epochs it keeps track of, released ones not yet pruned included.
  size_t TrackedForTesting() {
    absl::MutexLock lock(&mutex_);
    return sealing_.size();
  }

 private:
  void SweepUntilStopped();
  // Forgets the sealing epochs no snapshot holds any more, and notes the size left.
  void PruneReleased() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const Limits limits_;
  EpochCache cache_;
  absl::Mutex mutex_;
  // Every sealing epoch handed out; the ones no snapshot holds any more are pruned
  // at each sweep.
  std::vector<std::weak_ptr<SealingEpoch>> sealing_ ABSL_GUARDED_BY(mutex_);
  size_t pruned_size_ ABSL_GUARDED_BY(mutex_) = 0;  // its size after the last prune
  absl::Notification stopping_;
  std::thread sweeper_;
};

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_EPOCHS_H_
