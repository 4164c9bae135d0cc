// What a data-plane call ended with, in the metrics and the log.
#ifndef SEALBOX_SERVER_DATAPLANE_CALL_OUTCOME_H_
#define SEALBOX_SERVER_DATAPLANE_CALL_OUTCOME_H_

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

// Every call, unary or stream: its outcome and latency, and a log line for a failed
// authentication (naming the peer, never the token). `peer` is asked only for that
// line: gRPC builds the peer string anew on every call.
void RecordCallOutcome(const char* method, const absl::Status& status, absl::Time started,
                       absl::FunctionRef<std::string()> peer, Metrics& metrics);

// An Open, Rewrap or OpenStream: a failed decryption against the caller's key, or a
// refusal by the key's decryption-failure limit.
void CountOpenOutcome(const absl::Status& status, const std::string& tenant, const std::string& key,
                      Metrics& metrics);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_CALL_OUTCOME_H_
