// The etcd keystore's records: one etcd key per record under a prefix (layout.h),
// each value wrapped under the KEK and bound to its etcd key (record_envelope.h).
//
//   - A transaction reads records by Range and commits as one etcd Txn conditioned
//     on the mod_revision of every record it read (compare-and-swap): of two racing
//     replicas, one commits and the other is told ABORTED and starts over.
//   - Every write is also conditioned on the sealed KEK being the one its ring came
//     from, when a root key seals the KEK (kek_ring.h).
//   - Load pages through the prefix with Range at one revision.
//
// No thread of its own; following and proving current are the watch's and the
// heartbeat's (etcd_watch.h, etcd_heartbeat.h).
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_RECORDS_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_RECORDS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "server/keystore/etcd/etcd_client.h"
#include "server/keystore/etcd/layout.h"
#include "server/keystore/kek_ring.h"
#include "server/keystore/storage.h"

namespace sealbox::server::etcd {

class EtcdRecords {
 public:
  // `client` and `kek_source` (may be null) must outlive this. `page_size`: records
  // per Range page when loading (at least 1).
  EtcdRecords(EtcdClient& client, std::string prefix, std::shared_ptr<const KekRing> keks,
              KekSource* kek_source, int page_size);

  // "etcd keystore /sealbox/ at 10.0.0.1:2379,10.0.0.2:2379"
  std::string Describe() const;
  const Layout& layout() const { return layout_; }
  StoreKeks& keks() { return keks_; }

  // KeystoreStorage's calls of the same names (storage.h, etcd_storage.h).
  absl::StatusOr<bool> Prepare(bool create);
  absl::StatusOr<KeystoreContents> Load();
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin();
  absl::Status Import(const KeystoreContents& contents);
  absl::StatusOr<uint64_t> RewrapAll(const RewrapPace& pace);

  // The etcd keys under the prefix; the sealed KEK (written before the keystore, by
  // --init with an HSM) does not count.
  absl::StatusOr<int64_t> Count();
  // Unwraps a value with whichever KEK wrote it, and checks that it holds the record
  // its etcd key names (`name`; nullopt for the marker).
  absl::StatusOr<internal::Record> Decode(const mvccpb::KeyValue& kv,
                                          const std::optional<RecordName>& name);

  // Ends the waits between attempts and paced writes: a Txn is not sent again, a
  // rewrap stops (CANCELLED). Idempotent.
  void Stop();

 private:
  class Transaction;
  // What a Txn wrote first, to tell after a failure in flight whether it committed.
  struct Written {
    std::string key;
    std::optional<std::string> value;  // nullopt: deleted
  };

  // The key-value at `key`, or nullopt; `revision` gets the revision read at.
  absl::StatusOr<std::optional<mvccpb::KeyValue>> Get(const std::string& key,
                                                      int64_t* revision = nullptr);
  // The KEK a value was written under (null: one nobody knows).
  KekRef KekFor(absl::string_view value);
  absl::Status NoKeystore() const;
  absl::Status DifferentKek() const;
  absl::StatusOr<std::string> Seal(const std::string& key, const internal::Record& record,
                                   const Kek& kek) const;
  // Commits a Txn: its revision, ABORTED when a compare failed, UNAVAILABLE when etcd
  // did not answer (saying whether the change may have been made).
  // Written under `keks`: conditioned on the sealed KEK being the one they came from.
  absl::StatusOr<uint64_t> Commit(etcdserverpb::TxnRequest txn,
                                  const std::optional<Written>& written, const KekRing& keks);

  EtcdClient& client_;
  const Layout layout_;
  const int page_size_;
  StoreKeks keks_;
  std::once_flag stop_once_;  // Stop may be called from several threads
  absl::Notification stopping_;
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_RECORDS_H_
