// What the KMS v2 Status call answers: "ok" only when the bound key can serve right
// now, otherwise a reason an operator can act on; and the key_id Encrypt would
// answer with. kube-apiserver polls it about once a minute (every 10 s while
// unhealthy, and again for each of its own health checks), so it costs no call to
// the store: the keystore's freshness is an atomic load, and the round trip it
// proves (a seal and an open under the primary version, in memory) is made at most
// once per round_trip_ttl for the same key_id.
#ifndef SEALBOX_SERVER_KMS_KMS_HEALTH_H_
#define SEALBOX_SERVER_KMS_KMS_HEALTH_H_

#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/engine/data_plane_engine.h"
#include "server/keystore/keystore.h"

namespace sealbox::server {

// The one key a KMS socket serves.
struct KmsKey {
  std::string tenant;
  std::string key;
};

class KmsHealth {
 public:
  KmsHealth(Keystore& keystore, DataPlaneEngine& engine, KmsKey key,
            absl::Duration round_trip_ttl = absl::Seconds(5));

  struct Answer {
    std::string healthz;  // "ok", or why not
    std::string key_id;   // the primary version's; empty when there is none
  };
  Answer Check();

 private:
  // A seal and an open of a probe under the primary version of the key in
  // `snapshot`: OK, or why they failed.
  absl::Status RoundTrip(std::shared_ptr<const Snapshot> snapshot);

  Keystore& keystore_;
  DataPlaneEngine& engine_;
  const KmsKey key_;
  const absl::Duration round_trip_ttl_;
  absl::Mutex mu_;
  std::string proven_key_id_ ABSL_GUARDED_BY(mu_);
  absl::Time proven_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KMS_KMS_HEALTH_H_
