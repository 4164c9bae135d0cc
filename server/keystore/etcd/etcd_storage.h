// The etcd backend: several replicas share one keystore kept in etcd, one etcd key
// per record under a prefix (layout.h), each value wrapped under the KEK and bound to
// its etcd key (record_envelope.h). EtcdStorage only composes its parts, each of
// which answers one question:
//
//   etcd_records.h    what is stored: load, compare-and-swap transactions, import,
//                     rewrap
//   etcd_watch.h      what changed: the watch, its restarts and resumes, and a
//                     whole reload when it is compacted away
//   etcd_heartbeat.h  whether we are current: the heartbeat's proof, the barrier,
//                     catching up after an outage
//   listener_feed.h   what the listener has been told, in order
//   etcd_client.h     connections to the members, and the calls over them
//
// etcd down: what is loaded keeps serving while the keystore allows
// (--max-staleness); the heartbeat tells it (Reachable(false)) and looks for a
// member that answers.
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_STORAGE_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_STORAGE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "server/keystore/etcd/etcd_client.h"
#include "server/keystore/etcd/etcd_heartbeat.h"
#include "server/keystore/etcd/etcd_records.h"
#include "server/keystore/etcd/etcd_watch.h"
#include "server/keystore/etcd/listener_feed.h"
#include "server/keystore/kek.h"
#include "server/keystore/kek_ring.h"
#include "server/keystore/storage.h"

namespace sealbox::server::etcd {

struct EtcdStorageOptions {
  EtcdOptions etcd;
  std::string prefix = "/sealbox/";
  std::optional<Kek> kek;  // required
  // While the KEK is being changed: the one before it. Records still under it are
  // read with it and, at Prepare, written again under `kek`.
  std::optional<Kek> previous_kek;
  // Instead of the two above, when a root key seals the KEK (server/custody): the
  // KEKs, and where newer ones come from (it must outlive the storage).
  std::shared_ptr<const KekRing> keks;
  KekSource* kek_source = nullptr;
  // Records per Range page when loading.
  int page_size = 2000;
  // How often the keystore is proven current while etcd answers.
  absl::Duration heartbeat = absl::Milliseconds(250);
};

class EtcdStorage : public KeystoreStorage {
 public:
  // INVALID_ARGUMENT for no KEK, a bad endpoint or an empty prefix. Does not connect yet.
  static absl::StatusOr<std::unique_ptr<EtcdStorage>> Create(EtcdStorageOptions options);
  ~EtcdStorage() override;

  // "etcd keystore /sealbox/ at 10.0.0.1:2379,10.0.0.2:2379"
  std::string Describe() const override;
  // No marker: NOT_FOUND, unless `create`, which writes one if the prefix is empty
  // (and refuses a prefix that holds anything else).
  absl::StatusOr<bool> Prepare(bool create) override;
  absl::StatusOr<KeystoreContents> Load() override;
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin() override;
  // Watches from the revision after `revision`, and proves the listener current
  // every heartbeat.
  void Follow(uint64_t revision, StorageListener* listener) override;
  // Loads everything at etcd's current revision and hands it to the listener if it
  // is newer than what the watch has delivered. A whole load: for tests and tools.
  absl::Status Refresh() override;
  // Writes the prefix's sync key: its revision is after every earlier change, and
  // the watch delivers changes in order, this one included.
  absl::StatusOr<uint64_t> Barrier(absl::Duration timeout) override;
  void Stop() override;

  // Every record under an empty prefix, in transactions of up to 60, the marker
  // last; FAILED_PRECONDITION when the prefix holds anything.
  absl::Status Import(const KeystoreContents& contents) override;

  StoreKeks& keks() override { return records_.keks(); }
  // Every record not under the current KEK written again under it, in batches of
  // Txns each conditioned on its records being unchanged; passes again for records
  // that changed meanwhile.
  absl::StatusOr<uint64_t> RewrapAll(const RewrapPace& pace) override;

 private:
  EtcdStorage(EtcdStorageOptions options, std::unique_ptr<EtcdClient> client);

  // Declared in the order they are built: each part uses those above it.
  const std::unique_ptr<EtcdClient> client_;
  EtcdRecords records_;
  ListenerFeed feed_;
  EtcdWatch watch_;
  EtcdHeartbeat heartbeat_;
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_STORAGE_H_
