#include "server/engine/open_outcome.h"

#include "crypto/decryption_failure.h"
#include "server/engine/decryption_limit.h"

namespace sealbox::server {

void CountOpenOutcome(const absl::Status& status, const std::string& tenant, const std::string& key,
                      Metrics& metrics) {
  if (crypto::IsDecryptionFailure(status)) {
    metrics.CountKeyDecryptionFailure(tenant, key);
  } else if (IsDecryptionLimitReached(status)) {
    metrics.CountDecryptionRefused();
  }
}

}  // namespace sealbox::server
