#include "server/engine/decryption_limit.h"

#include "absl/strings/match.h"

namespace sealbox::server {
namespace {

constexpr char kLimitReached[] =
    "too many decryption failures for this key; rotate it (admin: key rotate) to open "
    "again";

}  // namespace

DecryptionFailureLimit::Primary DecryptionFailureLimit::PrimaryOf(const KeyEntry& key) {
  auto it = key.versions.find(key.primary_version);
  return {key.primary_version, it == key.versions.end() ? 0 : it->second.create_time_unix};
}

absl::Status DecryptionFailureLimit::Check(const KeyEntry& key) {
  if (max_failures_ == 0 || !any_failure_.load(std::memory_order_acquire)) {
    return absl::OkStatus();
  }
  absl::MutexLock lock(&mutex_);
  auto it = counts_.find({key.tenant, key.name});
  if (it == counts_.end() || it->second.primary != PrimaryOf(key) ||
      it->second.failures < max_failures_) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(kLimitReached);
}

bool DecryptionFailureLimit::RecordFailure(const KeyEntry& key) {
  if (max_failures_ == 0) return false;
  absl::MutexLock lock(&mutex_);
  any_failure_.store(true, std::memory_order_release);
  Count& count = counts_[{key.tenant, key.name}];
  if (count.primary != PrimaryOf(key)) count = {PrimaryOf(key), 0};
  return ++count.failures == max_failures_;
}

bool IsDecryptionLimitReached(const absl::Status& status) {
  return absl::IsResourceExhausted(status) &&
         absl::StartsWith(status.message(), "too many decryption failures");
}

}  // namespace sealbox::server
