// Failed opens per key, and the optional limit on them that NIST SP 800-38D
// Appendix B suggests: an attacker submitting forgeries learns something from each
// failure, so a key that fails too often stops opening until it is rotated.
//
// The count is per (tenant, key) and per process: replicas count separately, and a
// restart starts from zero. It also restarts when the key's primary version changes
// (RotateKey or ImportKey, on this replica or another one whose change this one has
// reloaded). Keys are tracked only once they fail, and only keys that exist, so memory
// is bounded by the keystore.
#ifndef SEALBOX_SERVER_ENGINE_DECRYPTION_LIMIT_H_
#define SEALBOX_SERVER_ENGINE_DECRYPTION_LIMIT_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/keystore/snapshot.h"

namespace sealbox::server {

class DecryptionFailureLimit {
 public:
  // `max_failures` 0: no limit (nothing is tracked).
  explicit DecryptionFailureLimit(uint64_t max_failures) : max_failures_(max_failures) {}

  // OK, or RESOURCE_EXHAUSTED once `key` reached the limit under its current
  // primary version.
  absl::Status Check(const KeyEntry& key);

  // Counts one failed open of `key`; true when this one reached the limit.
  bool RecordFailure(const KeyEntry& key);

 private:
  // Which primary version the count is for: its number and creation time (a key
  // deleted with its tenant and created again starts at version 1 again).
  using Primary = std::pair<uint32_t, int64_t>;
  static Primary PrimaryOf(const KeyEntry& key);
  struct Count {
    Primary primary;
    uint64_t failures = 0;
  };
  const uint64_t max_failures_;
  // Set with the first failure: until then Check, on every Open, takes no lock.
  std::atomic<bool> any_failure_{false};
  absl::Mutex mutex_;
  std::map<std::pair<std::string, std::string>, Count> counts_ ABSL_GUARDED_BY(mutex_);
};

// True for the status Check returns when a key is over its limit.
bool IsDecryptionLimitReached(const absl::Status& status);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_ENGINE_DECRYPTION_LIMIT_H_
