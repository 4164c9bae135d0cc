// The etcd backend: several replicas share one keystore kept in etcd, one etcd key
// per record under a prefix (layout.h), each value wrapped under the KEK and bound to
// its etcd key (record_envelope.h).
//
//   - A transaction reads records by Range and commits as one etcd Txn conditioned
//     on the mod_revision of every record it read (compare-and-swap): of two racing
//     replicas, one commits and the other is told ABORTED and starts over.
//   - Load pages through the prefix with Range at one revision.
//   - Follow watches the prefix from the revision after the one loaded; a watch
//     that is compacted away reloads everything at one revision.
//   - Every heartbeat, a linearizable read of etcd's revision, and the watch having
//     delivered it (or, when the newest revision is not ours, a barrier revision of
//     our own), proves the keystore current (CurrentAsOf). etcd's progress requests
//     would save the read, but etcd before 3.4.25/3.5.8 may answer one before the
//     events it covers (etcd issue 15220), and Debian 12 ships 3.4.23.
//   - etcd down: what is loaded keeps serving while the keystore allows
//     (--max-staleness); Reachable(false) tells the keystore. Every member is then
//     dialled afresh many times a second (EtcdClient::FindAnsweringMember); on the
//     first that answers, a small keystore is read afresh while the watch resumes
//     from etcd's revision now (a large one resumes from the last revision seen).
//
//   etcd_storage.cc          load and transactions
//   etcd_following.cc        the watch, and what it delivers
//   etcd_proving_current.cc  the heartbeat's proof, and catching up after an outage
//   etcd_client.h            connections to the members, and the calls over them
//   etcd_prober.h            the search for a member that answers
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_STORAGE_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_STORAGE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "crypto/secret/secret_bytes.h"
#include "server/keystore/etcd/etcd_client.h"
#include "server/keystore/etcd/layout.h"
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

  StoreKeks& keks() override { return keks_; }
  // Every record not under the current KEK written again under it, in batches of
  // Txns each conditioned on its records being unchanged; passes again for records
  // that changed meanwhile.
  absl::StatusOr<uint64_t> RewrapAll(const RewrapPace& pace) override;

 private:
  class Transaction;
  // What a Txn wrote first, to tell after a failure in flight whether it committed.
  struct Written {
    std::string key;
    std::optional<std::string> value;  // nullopt: deleted
  };

  explicit EtcdStorage(EtcdStorageOptions options, std::unique_ptr<EtcdClient> client);

  // The key-value at `key`, or nullopt; `revision` gets the revision read at.
  absl::StatusOr<std::optional<mvccpb::KeyValue>> Get(const std::string& key,
                                                      int64_t* revision = nullptr);
  absl::StatusOr<int64_t> CountUnderPrefix();
  // Unwraps a record with whichever KEK wrote it, and checks that it is the record
  // its etcd key names.
  absl::StatusOr<internal::Record> Decode(const mvccpb::KeyValue& kv,
                                          const std::optional<RecordName>& name);
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

  void WatchLoop();
  // One watch stream, until it ends: OUT_OF_RANGE when compacted away, else why.
  absl::Status WatchOnce(bool& created);
  // Ends the watch stream and starts another at once, on the current endpoint.
  void RestartWatch();
  // Whether a restart was asked for since the stream began; clears it.
  bool TakeRestart();

  void HeartbeatLoop();
  // Proves the listener current as of `began` (a reading taken before the proof).
  absl::Status ProveCurrent(std::chrono::steady_clock::time_point began);
  // Waits until the listener has been told of `revision`; false after `patience`.
  bool WaitDelivered(uint64_t revision, absl::Duration patience);
  void SetReachable(bool reachable, absl::string_view why);
  // How long a read (or a barrier) may take before its connection counts as stuck.
  absl::Duration ReadTimeout() const;
  // After an outage: resumes the watch, bringing the listener up to date at once.
  void CatchUpAfterOutage();
  // Restarts the watch from etcd's revision now; whether etcd created it in time.
  bool ResumeWatchFromNow();
  // Loads the keystore and hands it to the listener, then what the stream from now
  // held back.
  absl::Status Relist();
  void HandleEvents(const etcdserverpb::WatchResponse& response);
  // Hands `changes` at `revision` to the listener unless it has seen that revision.
  void Deliver(std::vector<RecordChange> changes, uint64_t revision);
  absl::Status ReloadAll(absl::string_view reason);

  const EtcdStorageOptions options_;
  const std::unique_ptr<EtcdClient> client_;
  const Layout layout_;
  StoreKeks keks_;

  absl::Mutex deliver_mu_;
  StorageListener* listener_ ABSL_GUARDED_BY(deliver_mu_) = nullptr;
  uint64_t delivered_ ABSL_GUARDED_BY(deliver_mu_) = 0;
  // While a stream from now waits for its relist: what it delivered meanwhile.
  bool holding_ ABSL_GUARDED_BY(deliver_mu_) = false;
  std::vector<std::pair<std::vector<RecordChange>, uint64_t>> held_ ABSL_GUARDED_BY(deliver_mu_);

  absl::Mutex stream_mu_;
  grpc::ClientContext* stream_context_ ABSL_GUARDED_BY(stream_mu_) = nullptr;
  bool restart_watch_ ABSL_GUARDED_BY(stream_mu_) = false;
  // The next stream starts from etcd's revision now (CatchUpAfterOutage); such a
  // stream, once etcd has created it, sets the revision it was created at.
  bool resume_from_now_ ABSL_GUARDED_BY(stream_mu_) = false;
  int64_t resumed_at_ ABSL_GUARDED_BY(stream_mu_) = 0;
  absl::Notification stopping_;
  std::thread watcher_;
  std::thread heartbeat_;
  // What the heartbeat's reads have recently taken (a moving average, nanoseconds).
  std::atomic<int64_t> read_nanos_{10'000'000};
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_STORAGE_H_
