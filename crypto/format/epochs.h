// Epoch subkeys (unary.h's EpochSubkey, docs/FORMAT.md "Epochs") as a server holds
// them: SealingEpoch, the epoch a key version seals under, and EpochCache, the other
// epochs it has opened (other replicas' and earlier processes').
#ifndef SEALBOX_CRYPTO_FORMAT_EPOCHS_H_
#define SEALBOX_CRYPTO_FORMAT_EPOCHS_H_

#include <atomic>
#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "absl/synchronization/mutex.h"
#include "crypto/secret/secret_bytes.h"
#include "crypto/format/unary.h"

namespace sealbox::crypto {

// Derived on first use, so loading a keystore of many keys expands none of them,
// and replaced by a fresh epoch once it has sealed 2^31 messages, long before its
// nonce counter runs out. Sealers never take a lock; a mutex only serialises the
// rare derivation.
class SealingEpoch {
 public:
  SealingEpoch(std::shared_ptr<const SecretBytes> material,
               KeyContext context);

  // The epoch to seal with now. The pointer lives as long as this object.
  absl::StatusOr<EpochSubkey*> Current();

  // The current epoch if it has been derived and is `epoch_id`, else nullptr: the
  // fast path for opening what this process sealed.
  const EpochSubkey* CurrentIf(const EpochId& epoch_id) const;

  // Test hook: epochs derived from now on start their counter here, so a test can
  // reach the renewal point without sealing 2^31 messages.
  void StartCountersAtForTesting(uint64_t counter) { first_counter_ = counter; }

  const SecretBytes& material() const { return *material_; }
  uint32_t version() const { return context_.version; }

 private:
  const std::shared_ptr<const SecretBytes> material_;
  const KeyContext context_;
  std::atomic<EpochSubkey*> current_{nullptr};
  uint64_t first_counter_ = 0;
  absl::Mutex mutex_;
  // Every epoch this object derived: sealers may still hold a replaced one. A new
  // epoch every 2^31 messages keeps this list short for the process's lifetime.
  std::vector<std::unique_ptr<EpochSubkey>> epochs_ ABSL_GUARDED_BY(mutex_);
};

// The subkeys of epochs other than a key's own sealing one, derived once on a miss
// and kept up to `capacity`, the oldest dropped first.
class EpochCache {
 public:
  explicit EpochCache(size_t capacity) : capacity_(capacity) {}

  absl::StatusOr<std::shared_ptr<const EpochSubkey>> Get(
      absl::Span<const uint8_t> material, const KeyContext& context,
      const EpochId& epoch_id);

 private:
  using Entry = std::tuple<std::string, std::string, uint32_t, EpochId>;
  const size_t capacity_;
  absl::Mutex mutex_;
  std::map<Entry, std::shared_ptr<const EpochSubkey>> subkeys_ ABSL_GUARDED_BY(mutex_);
  std::list<Entry> insertion_order_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_FORMAT_EPOCHS_H_
