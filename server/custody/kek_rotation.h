// A KEK rotation while serving: a new KEK, sealed by the root key, becomes current at
// once (every write from then on is under it, on every replica: kek_ring.h), every
// record is rewrapped under it in the background while both KEKs are read, and the
// old KEK is retired from the sealed KEK once none is left under it.
//
// Each step is durable before the next, so a kill at any point loses nothing: the
// sealed KEK keeps listing the old KEK until the end, the next start reads records
// under either, rewraps what is left, and the check below retires the old one. Any
// replica finishes a rotation it finds unfinished; they agree through the store.
#ifndef SEALBOX_SERVER_CUSTODY_KEK_ROTATION_H_
#define SEALBOX_SERVER_CUSTODY_KEK_ROTATION_H_

#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/custody/root_key.h"
#include "server/custody/sealed_kek_source.h"
#include "server/custody/sealed_kek_store.h"
#include "server/keystore/keystore.h"

namespace sealbox::server::custody {

struct KekRotationOptions {
  // A new KEK this long after the current one was made (--kek-rotation-period);
  // zero: only when asked (RotateKek).
  absl::Duration period = absl::ZeroDuration();
  // How often to look for a rotation to finish or one that is due.
  absl::Duration check_interval = absl::Seconds(10);
  // The rewrap's pace in records per second (--kek-rewrap-rate); 0: unbounded.
  double rewrap_records_per_second = 0;
};

struct KekStatus {
  std::string root_key;     // "PKCS#11 key 'x' on token 'y'"
  std::string sealed_at;    // "/data/kek.sealed", "etcd key /sealbox/kek at ..."
  std::string fingerprint;  // the current KEK's, hex
  absl::Time created = absl::InfinitePast();
  int previous_keks = 0;           // > 0: records may still be under an older KEK
  bool rewrapping = false;         // this replica is rewrapping now
  uint64_t records_rewrapped = 0;  // by this replica's last rewrap
  absl::Time next_rotation = absl::InfiniteFuture();  // without a period: never
  std::string last_error;                             // of this replica's last rewrap, if it failed
};

class KekRotation {
 public:
  // A custody event ("kek_rotation_started", "kek_rotation_finished",
  // "kek_rotation_failed") with its outcome and the KEK it concerns (hex).
  using OnEvent = std::function<void(absl::string_view event, const absl::Status& status,
                                     const std::string& fingerprint)>;

  // All must outlive the rotation. Starts the check thread, which first finishes a
  // rotation a kill left unfinished.
  KekRotation(RootKey* root_key, SealedKekStore* store, SealedKekSource* source, Keystore* keystore,
              KekRotationOptions options, OnEvent on_event);
  // Stops the check thread and waits for a rewrap in progress to stop.
  ~KekRotation();

  KekRotation(const KekRotation&) = delete;
  KekRotation& operator=(const KekRotation&) = delete;

  // Starts a rotation and returns at once, the new KEK current. FAILED_PRECONDITION
  // while the last one is unfinished; ABORTED when another replica changed the KEK
  // meanwhile; UNAVAILABLE when the root key or the store cannot be used.
  absl::StatusOr<KekStatus> Start();

  // The KEK and the rotation as this replica sees them.
  absl::StatusOr<KekStatus> Status();

 private:
  void CheckLoop();
  // One check: finish a rotation left unfinished, or start one that is due.
  void Check();
  // Rewraps every record under the current KEK, then retires the previous ones.
  void Finish();
  void StartFinishing() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<SealedKekStore::Stored> ReadStored();

  RootKey* const root_key_;
  SealedKekStore* const store_;
  SealedKekSource* const source_;
  Keystore* const keystore_;
  const KekRotationOptions options_;
  const OnEvent on_event_;

  absl::Mutex mu_;
  bool rewrapping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t records_rewrapped_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  std::thread worker_ ABSL_GUARDED_BY(mu_);  // the rewrap

  absl::Notification stop_;
  std::thread checker_;
};

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_KEK_ROTATION_H_
