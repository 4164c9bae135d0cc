// The epoch a key's primary version seals under (docs/FORMAT.md, "Epochs"): derived
// on first use, so loading a keystore of many keys expands none of them, and replaced
// by a fresh epoch once it has sealed 2^31 messages, long before its nonce counter
// runs out. Sealers never take a lock; a mutex only serialises the rare derivation.
#ifndef SEALBOX_SERVER_KEYSTORE_SEALING_EPOCH_H_
#define SEALBOX_SERVER_KEYSTORE_SEALING_EPOCH_H_

#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "crypto/format/unary.h"
#include "crypto/secret/secret_bytes.h"

namespace sealbox::server {

class SealingEpoch {
 public:
  SealingEpoch(std::shared_ptr<const crypto::SecretBytes> material,
               crypto::KeyContext context);

  // The epoch to seal with now. The pointer lives as long as this object.
  absl::StatusOr<crypto::EpochSubkey*> Current();

  // The current epoch if it has been derived and is `epoch_id`, else nullptr: the
  // fast path for opening what this process sealed.
  const crypto::EpochSubkey* CurrentIf(const crypto::EpochId& epoch_id) const;

  // Test hook: epochs derived from now on start their counter here, so a test can
  // reach the renewal point without sealing 2^31 messages.
  void StartCountersAtForTesting(uint64_t counter) { first_counter_ = counter; }

  const crypto::SecretBytes& material() const { return *material_; }
  uint32_t version() const { return context_.version; }

 private:
  const std::shared_ptr<const crypto::SecretBytes> material_;
  const crypto::KeyContext context_;
  std::atomic<crypto::EpochSubkey*> current_{nullptr};
  uint64_t first_counter_ = 0;
  absl::Mutex mutex_;
  // Every epoch this object derived: sealers may still hold a replaced one. A new
  // epoch every 2^31 messages keeps this list short for the process's lifetime.
  std::vector<std::unique_ptr<crypto::EpochSubkey>> epochs_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_SEALING_EPOCH_H_
