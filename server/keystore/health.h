// What the keystore reports of its store, for health checks and metrics: a plain
// struct, so that the metrics can read it without depending on the keystore.
#ifndef SEALBOX_SERVER_KEYSTORE_HEALTH_H_
#define SEALBOX_SERVER_KEYSTORE_HEALTH_H_

#include <cstdint>

#include "absl/time/time.h"

namespace sealbox::server {

struct KeystoreHealth {
  bool loaded = false;
  bool reachable = false;
  // Since the snapshot was last proven current (InfiniteDuration before loading),
  // and whether that is within max_staleness.
  absl::Duration staleness = absl::InfiniteDuration();
  absl::Duration max_staleness = absl::InfiniteDuration();
  bool fresh = false;
  // Calls Serving() refused because the snapshot was stale.
  uint64_t stale_refusals = 0;
  // The store revision (etcd) or file generation the snapshot is at.
  uint64_t revision = 0;
  // Whole reloads after loading: a compacted etcd watch, a file another process wrote.
  uint64_t reloads = 0;
  // CatchUp calls that waited for the store (a token or key not known yet), and the
  // seconds they waited in all.
  uint64_t catch_ups = 0;
  double catch_up_seconds = 0;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_HEALTH_H_
