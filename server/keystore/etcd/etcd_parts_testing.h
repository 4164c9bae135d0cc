// For the tests of the etcd keystore's parts: a listener that remembers what it was
// told, and the records of a fresh prefix on a real etcd to write changes through.
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_PARTS_TESTING_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_PARTS_TESTING_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "grpcpp/create_channel.h"
#include "server/keystore/etcd/etcd_client.h"
#include "server/keystore/etcd/etcd_records.h"
#include "server/keystore/storage.h"
#include "server/keystore/testing/test_store.h"

namespace sealbox::server::etcd {

// Remembers what it was told: "reload N", "apply N tenant acme ...".
class ToldListener : public StorageListener {
 public:
  void Reload(const KeystoreContents& contents) override {
    absl::MutexLock lock(&mu);
    told.push_back(absl::StrCat("reload ", contents.generation));
    revision = contents.generation;
  }
  void Apply(const std::vector<RecordChange>& changes, uint64_t at) override {
    absl::MutexLock lock(&mu);
    std::string line = absl::StrCat("apply ", at);
    for (const RecordChange& c : changes) {
      absl::StrAppend(&line, " ", c.name.ToString(), c.value.has_value() ? "" : " deleted");
    }
    told.push_back(line);
    revision = at;
  }
  void Reachable(bool now, absl::string_view) override {
    absl::MutexLock lock(&mu);
    reachable = now;
  }
  void CurrentAsOf(std::chrono::steady_clock::time_point as_of) override {
    absl::MutexLock lock(&mu);
    current_as_of = std::max(current_as_of, as_of);
    ++proofs;
  }

  // Whether `condition` (called under mu) held within `within`.
  bool WaitFor(const std::function<bool()>& condition, absl::Duration within = absl::Seconds(10)) {
    absl::MutexLock lock(&mu);
    auto met = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return condition(); };
    return mu.AwaitWithTimeout(absl::Condition(&met), within);
  }

  absl::Mutex mu;
  std::vector<std::string> told ABSL_GUARDED_BY(mu);
  uint64_t revision ABSL_GUARDED_BY(mu) = 0;
  bool reachable ABSL_GUARDED_BY(mu) = true;
  std::chrono::steady_clock::time_point current_as_of ABSL_GUARDED_BY(mu);
  int proofs ABSL_GUARDED_BY(mu) = 0;
};

// A keystore created under a fresh prefix of the etcd at `endpoints` (the test
// binary's own, by default), and its records to write through.
class RecordsOnEtcd {
 public:
  explicit RecordsOnEtcd(std::vector<std::string> endpoints = {}, int page_size = 3)
      : kek_(testing::RandomKek()) {
    static std::atomic<int> next{0};
    EtcdOptions options;
    options.endpoints = endpoints.empty() ? testing::SharedEtcd()->endpoints() : endpoints;
    options.request_timeout = absl::Seconds(2);
    endpoints_ = options.endpoints;
    client_ = *EtcdClient::Create(std::move(options));
    prefix_ = absl::StrCat("/etcd-parts-", next++, "/");
    records_ = NewRecords(kek_.Clone(), page_size);
  }

  EtcdClient& client() { return *client_; }
  EtcdRecords& records() { return *records_; }
  const std::string& prefix() const { return prefix_; }
  const std::vector<std::string>& endpoints() const { return endpoints_; }
  const Kek& kek() const { return kek_; }

  // Records of the same prefix under other KEKs, as another replica holds them.
  std::unique_ptr<EtcdRecords> NewRecords(Kek kek, int page_size = 3,
                                          std::vector<Kek> previous = {}) {
    return std::make_unique<EtcdRecords>(
        *client_, prefix_, std::make_shared<const KekRing>(std::move(kek), std::move(previous)),
        nullptr, page_size);
  }

  // Creates (or deletes) a tenant in a transaction of its own: the commit's revision.
  absl::StatusOr<uint64_t> PutTenant(const std::string& name, bool deleted = false) {
    auto transaction = records_->Begin();
    if (!transaction.ok()) return transaction.status();
    std::optional<internal::Record> value;
    if (!deleted) {
      value.emplace();
      value->mutable_tenant()->set_name(name);
    }
    std::vector<RecordChange> changes;
    changes.emplace_back(RecordName::Tenant(name), std::move(value));
    return (*transaction)->Commit(std::move(changes));
  }

  // etcd's revision now.
  int64_t Revision() {
    return client_->CurrentRevision(prefix_ + "keystore", absl::Seconds(5)).value_or(-1);
  }

  // Compacts etcd's history up to `revision`, as an operator's etcdctl would.
  void Compact(int64_t revision) {
    auto kv = etcdserverpb::KV::NewStub(
        grpc::CreateChannel(endpoints_[0], grpc::InsecureChannelCredentials()));
    etcdserverpb::CompactionRequest request;
    request.set_revision(revision);
    request.set_physical(true);
    etcdserverpb::CompactionResponse response;
    grpc::ClientContext context;
    kv->Compact(&context, request, &response);
  }

 private:
  Kek kek_;
  std::vector<std::string> endpoints_;
  std::unique_ptr<EtcdClient> client_;
  std::string prefix_;
  std::unique_ptr<EtcdRecords> records_;
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_PARTS_TESTING_H_
