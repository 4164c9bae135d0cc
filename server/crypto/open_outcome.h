// What an Open, Rewrap or OpenStream ended with, in the metrics: a failed decryption
// against the caller's key, or a refusal by the key's decryption-failure limit.
#ifndef SEALBOX_SERVER_CRYPTO_OPEN_OUTCOME_H_
#define SEALBOX_SERVER_CRYPTO_OPEN_OUTCOME_H_

#include <string>

#include "absl/status/status.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

void CountOpenOutcome(const absl::Status& status, const std::string& tenant,
                      const std::string& key, Metrics& metrics);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_CRYPTO_OPEN_OUTCOME_H_
