// Where the sealed KEK (sealed_kek.h) is kept: beside the keystore, so that every
// replica that finds the keystore finds its KEK too.
//
//   FileSealedKekStore   <data-dir>/kek.sealed, next to keystore.sbx
//   EtcdSealedKekStore   the etcd key <prefix>kek, next to the records
//
// --init writes it once (two replicas started with --init at once agree on whichever
// wrote first); a KEK rotation replaces it, only if it is still what it read.
#ifndef SEALBOX_SERVER_CUSTODY_SEALED_KEK_STORE_H_
#define SEALBOX_SERVER_CUSTODY_SEALED_KEK_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "server/keystore/etcd/etcd_options.h"

namespace sealbox::server::custody {

class SealedKekStore {
 public:
  virtual ~SealedKekStore() = default;
  // "/var/lib/sealbox/kek.sealed", "etcd key /sealbox/kek at 10.0.0.1:2379".
  virtual std::string Describe() const = 0;
  // What is stored, and its revision: etcd's mod revision (which every etcd write
  // of the keystore is conditioned on, kek_ring.h); 0 for the file.
  struct Stored {
    std::string bytes;
    int64_t revision = 0;
  };

  // The sealed KEK, or nullopt when there is none yet. UNAVAILABLE when the store
  // cannot be reached.
  virtual absl::StatusOr<std::optional<Stored>> Read() = 0;
  // Writes `sealed` unless a sealed KEK is there already, durably; returns the one
  // there afterwards: `sealed`, or what another replica wrote first.
  virtual absl::StatusOr<Stored> CreateIfAbsent(const std::string& sealed) = 0;
  // Replaces `expected` (as Read returned it) with `sealed`, durably; ABORTED when the
  // stored one is no longer `expected` (another replica got there first).
  virtual absl::StatusOr<Stored> Replace(const Stored& expected, const std::string& sealed) = 0;
};

// <data_dir>/kek.sealed.
std::unique_ptr<SealedKekStore> FileSealedKekStore(const std::string& data_dir);

// <prefix>kek in the etcd cluster `etcd` names.
absl::StatusOr<std::unique_ptr<SealedKekStore>> EtcdSealedKekStore(etcd::EtcdOptions etcd,
                                                                   const std::string& prefix);

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_SEALED_KEK_STORE_H_
