// The data plane's limits, set by flags (server/process/run_server.cc).
#ifndef SEALBOX_SERVER_DATAPLANE_DATA_PLANE_LIMITS_H_
#define SEALBOX_SERVER_DATAPLANE_DATA_PLANE_LIMITS_H_

#include <cstddef>
#include <cstdint>

#include "absl/time/time.h"

namespace sealbox::server {

// Associated data of one unary call or stream start, at most. Unlike plaintext it is
// never chunked: it arrives in one message and is held whole for the call.
inline constexpr size_t kMaxAssociatedDataBytes = 64 * 1024;

struct DataPlaneLimits {
  // Largest plaintext (and ciphertext, less the format's overhead) of a unary call.
  size_t max_unary_bytes = 1 << 20;
  // Streams open at once; more are refused with RESOURCE_EXHAUSTED.
  int max_concurrent_streams = 256;
  // A stream with no progress (no message received, no response taken) for this
  // long is cancelled. Zero: never.
  absl::Duration stream_idle_timeout = absl::Seconds(60);
  // Failed opens per key before its opens are refused (decryption_limit.h); 0: none.
  uint64_t max_decryption_failures_per_key = 0;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_DATA_PLANE_LIMITS_H_
