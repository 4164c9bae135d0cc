// Where the sealed KEK (sealed_kek.h) is kept: beside the keystore, so that every
// replica that finds the keystore finds its KEK too.
//
//   FileSealedKekStore   <data-dir>/kek.sealed, next to keystore.sbx
//   EtcdSealedKekStore   the etcd key <prefix>kek, next to the records
//
// It is written once, by --init, and never overwritten: two replicas started with
// --init at once agree on whichever wrote first.
#ifndef SEALBOX_SERVER_CUSTODY_SEALED_KEK_STORE_H_
#define SEALBOX_SERVER_CUSTODY_SEALED_KEK_STORE_H_

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
  // The sealed KEK, or nullopt when there is none yet. UNAVAILABLE when the store
  // cannot be reached.
  virtual absl::StatusOr<std::optional<std::string>> Read() = 0;
  // Writes `sealed` unless a sealed KEK is there already, durably; returns the one
  // there afterwards: `sealed`, or what another replica wrote first.
  virtual absl::StatusOr<std::string> CreateIfAbsent(const std::string& sealed) = 0;
};

// <data_dir>/kek.sealed.
std::unique_ptr<SealedKekStore> FileSealedKekStore(const std::string& data_dir);

// <prefix>kek in the etcd cluster `etcd` names.
absl::StatusOr<std::unique_ptr<SealedKekStore>> EtcdSealedKekStore(etcd::EtcdOptions etcd,
                                                                   const std::string& prefix);

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_SEALED_KEK_STORE_H_
