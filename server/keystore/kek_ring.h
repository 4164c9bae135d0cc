// The KEKs a store is read with, and how a store learns of new ones while serving.
//
// A ring holds the current KEK, which every write uses, and, while the KEK is being
// changed (a KEK rotation, server/custody/kek_rotation.h), the ones before it, which
// records may still be under. A ring never changes; a store swaps it whole.
//
// When a root key seals the KEK, a KekSource gives the ring in force: a store asks it
// when it finds a record under a KEK its ring does not know (another replica rotated),
// and every etcd write is conditioned on the sealed KEK being the one its ring came
// from, so that no replica writes under a KEK a rotation has retired.
#ifndef SEALBOX_SERVER_KEYSTORE_KEK_RING_H_
#define SEALBOX_SERVER_KEYSTORE_KEK_RING_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/keystore/kek.h"

namespace sealbox::server {

struct KekRing {
  KekRing(Kek current, std::vector<Kek> previous = {}, int64_t sealed_revision = 0)
      : current(std::move(current)),
        previous(std::move(previous)),
        sealed_revision(sealed_revision) {}

  Kek current;
  std::vector<Kek> previous;
  // Which sealed KEK the ring came from: the etcd mod revision of <prefix>kek. 0: the
  // KEK was given (--kek-file), or the keystore is a file.
  int64_t sealed_revision = 0;

  // The ring's KEK for which `wrote(kek)` holds (a header's fingerprint check), or null.
  const Kek* Find(const std::function<bool(const Kek&)>& wrote) const;
};

// The ring of a KEK that was given (--kek-file), with the one before it while it is
// changed (--previous-kek-file); INVALID_ARGUMENT "no KEK" without `kek`.
absl::StatusOr<std::shared_ptr<const KekRing>> GivenKeks(std::optional<Kek> kek,
                                                         std::optional<Kek> previous);

// A ring and a KEK of it, kept alive together.
using KekRef = std::shared_ptr<const Kek>;

class KekSource {
 public:
  virtual ~KekSource() = default;
  // The ring in force now: the sealed KEK read again, and unsealed if it changed.
  virtual absl::StatusOr<std::shared_ptr<const KekRing>> Current() = 0;
};

// A store's KEKs: its ring, and where to ask for a newer one. Thread-safe.
class StoreKeks {
 public:
  // `source` may be null (the KEK was given); it must outlive this.
  StoreKeks(std::shared_ptr<const KekRing> ring, KekSource* source)
      : ring_(std::move(ring)), source_(source) {}

  std::shared_ptr<const KekRing> ring() const;
  // Adopts `ring` unless it came from an older sealed KEK than the ring held (two
  // readers of the sealed KEK may finish in either order).
  void Set(std::shared_ptr<const KekRing> ring);
  bool has_source() const { return source_ != nullptr; }

  // The current KEK, to write under.
  KekRef Current() const;

  // The KEK for which `wrote` holds: from the ring, else from the source's ring in
  // force. The source is asked by one caller at a time, the others waiting for its
  // answer, and at most once a second while nothing new turns up. Null when neither
  // knows it: a different KEK.
  KekRef For(const std::function<bool(const Kek&)>& wrote);

  // Asks the source for the ring in force and adopts it; the ring as it is without
  // a source.
  absl::StatusOr<std::shared_ptr<const KekRing>> Refresh();

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const KekRing> ring_ ABSL_GUARDED_BY(mu_);
  absl::Time last_miss_refresh_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool asking_source_ ABSL_GUARDED_BY(mu_) = false;
  KekSource* const source_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_KEK_RING_H_
