#include "server/keystore/call_snapshot.h"

namespace sealbox::server {

bool CallSnapshot::Lacks(const std::string& tenant, const std::string& key,
                         uint32_t version) const {
  const KeyEntry* entry = snapshot_->FindKey(tenant, key);
  return entry == nullptr ||
         (!entry->versions.empty() && version > entry->versions.rbegin()->first);
}

const Snapshot& CallSnapshot::For(const std::string& tenant, const std::string& key,
                                  uint32_t version) {
  if (source_ == nullptr || waited_ || !Lacks(tenant, key, version)) return *snapshot_;
  waited_ = true;
  if (std::shared_ptr<const Snapshot> fresher = source_->CaughtUp()) {
    snapshot_ = std::move(fresher);
  } else {
    wait_failed_ = true;
  }
  return *snapshot_;
}

bool CallSnapshot::StoreUnreachableFor(const std::string& tenant, const std::string& key,
                                       uint32_t version) const {
  return wait_failed_ && version != 0 && Lacks(tenant, key, version);
}

}  // namespace sealbox::server
