#include "server/dataplane/call_outcome.h"

#include "crypto/aes_gcm.h"
#include "server/dataplane/decryption_limit.h"
#include "server/log.h"

namespace sealbox::server {

void RecordCallOutcome(const char* method, const absl::Status& status, absl::Time started,
                       absl::FunctionRef<std::string()> peer, Metrics& metrics) {
  metrics.RecordOutcome(method, status, started);
  if (absl::IsUnauthenticated(status)) {
    Log("auth_failed", "warning").Add("method", method).Add("peer", peer());
  }
}

void CountOpenOutcome(const absl::Status& status, const std::string& tenant, const std::string& key,
                      Metrics& metrics) {
  if (crypto::IsDecryptionFailure(status)) {
    metrics.CountKeyDecryptionFailure(tenant, key);
  } else if (IsDecryptionLimitReached(status)) {
    metrics.CountDecryptionRefused();
  }
}

}  // namespace sealbox::server
