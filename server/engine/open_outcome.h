// What an Open (unary, batch item, stream, or the KMS socket's Decrypt) adds to the
// metrics beyond the call's own outcome.
#ifndef SEALBOX_SERVER_ENGINE_OPEN_OUTCOME_H_
#define SEALBOX_SERVER_ENGINE_OPEN_OUTCOME_H_

#include <string>

#include "absl/status/status.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

// A failed decryption against the caller's key, or a refusal by the key's
// decryption-failure limit (decryption_limit.h).
void CountOpenOutcome(const absl::Status& status, const std::string& tenant, const std::string& key,
                      Metrics& metrics);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_ENGINE_OPEN_OUTCOME_H_
