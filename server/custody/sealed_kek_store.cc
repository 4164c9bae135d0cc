#include "server/custody/sealed_kek_store.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/keystore/etcd/etcd_client.h"
#include "server/keystore/etcd/layout.h"
#include "server/keystore/file/durable_file.h"

namespace sealbox::server::custody {
namespace {

// The bytes of a string, for the file functions.
absl::Span<const uint8_t> BytesOf(const std::string& s) {
  return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

class FileStore final : public SealedKekStore {
 public:
  explicit FileStore(std::string path) : path_(std::move(path)) {}

  std::string Describe() const override { return path_; }

  absl::StatusOr<std::optional<Stored>> Read() override {
    absl::StatusOr<FileRead> read = ReadFile(path_);
    if (absl::IsNotFound(read.status())) return std::nullopt;
    if (!read.ok()) return read.status();
    return Stored{std::string(read->bytes.begin(), read->bytes.end()), 0};
  }

  // The first writer wins (link(2) never replaces); the others read what it wrote.
  absl::StatusOr<Stored> CreateIfAbsent(const std::string& sealed) override {
    absl::Status created = CreateFileIfAbsent(path_, BytesOf(sealed));
    if (!created.ok() && !absl::IsAlreadyExists(created)) return created;
    return ReadPresent();
  }

  // Compare and replace under a lock of its own (kek.sealed.lock): the keystore's
  // writers read this file, never lock it.
  absl::StatusOr<Stored> Replace(const Stored& expected, const std::string& sealed) override {
    absl::StatusOr<FileLock> lock = FileLock::Acquire(path_ + ".lock");
    if (!lock.ok()) return lock.status();
    absl::StatusOr<Stored> now = ReadPresent();
    if (!now.ok()) return now.status();
    if (now->bytes != expected.bytes) {
      return absl::AbortedError(absl::StrCat(path_, " changed since it was read"));
    }
    absl::StatusOr<FileIdentity> written =
        ReplaceFile(path_, BytesOf(sealed), /*fail_before_rename=*/nullptr);
    if (!written.ok()) return written.status();
    return Stored{sealed, 0};
  }

 private:
  absl::StatusOr<Stored> ReadPresent() {
    absl::StatusOr<std::optional<Stored>> there = Read();
    if (!there.ok()) return there.status();
    if (!there->has_value()) return absl::UnavailableError(absl::StrCat(path_, " vanished"));
    return **std::move(there);
  }

  const std::string path_;
};

class EtcdStore final : public SealedKekStore {
 public:
  EtcdStore(std::unique_ptr<etcd::EtcdClient> client, std::string key)
      : client_(std::move(client)), key_(std::move(key)) {}

  std::string Describe() const override {
    return absl::StrCat("etcd key ", key_, " at ", client_->Endpoints());
  }

  absl::StatusOr<std::optional<Stored>> Read() override {
    etcdserverpb::RangeRequest request;
    request.set_key(key_);
    absl::StatusOr<etcdserverpb::RangeResponse> response = client_->Range(request);
    if (!response.ok()) return response.status();
    if (response->kvs_size() == 0) return std::nullopt;
    return Stored{response->kvs(0).value(), response->kvs(0).mod_revision()};
  }

  // One transaction: put if the key was never created, else read what is there.
  absl::StatusOr<Stored> CreateIfAbsent(const std::string& sealed) override {
    etcdserverpb::TxnRequest txn;
    etcdserverpb::Compare* absent = txn.add_compare();
    absent->set_key(key_);
    absent->set_target(etcdserverpb::Compare_CompareTarget_CREATE);
    absent->set_result(etcdserverpb::Compare_CompareResult_EQUAL);
    absent->set_create_revision(0);
    return PutOrRead(txn, sealed);
  }

  absl::StatusOr<Stored> Replace(const Stored& expected, const std::string& sealed) override {
    etcdserverpb::TxnRequest txn;
    etcdserverpb::Compare* unchanged = txn.add_compare();
    unchanged->set_key(key_);
    unchanged->set_target(etcdserverpb::Compare_CompareTarget_MOD);
    unchanged->set_result(etcdserverpb::Compare_CompareResult_EQUAL);
    unchanged->set_mod_revision(expected.revision);
    absl::StatusOr<Stored> there = PutOrRead(txn, sealed);
    if (there.ok() && there->bytes != sealed) {
      return absl::AbortedError(absl::StrCat(key_, " changed since it was read"));
    }
    return there;
  }

 private:
  // `txn` puts `sealed` if its compares hold, else reads what is there.
  absl::StatusOr<Stored> PutOrRead(etcdserverpb::TxnRequest& txn, const std::string& sealed) {
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(key_);
    put->set_value(sealed);
    txn.add_failure()->mutable_request_range()->set_key(key_);
    absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(txn);
    if (!response.ok()) return response.status();
    if (response->succeeded()) return Stored{sealed, response->header().revision()};
    const etcdserverpb::RangeResponse& there = response->responses(0).response_range();
    if (there.kvs_size() == 0) return absl::AbortedError(absl::StrCat(key_, " vanished"));
    return Stored{there.kvs(0).value(), there.kvs(0).mod_revision()};
  }

  std::unique_ptr<etcd::EtcdClient> client_;
  const std::string key_;
};

}  // namespace

std::unique_ptr<SealedKekStore> FileSealedKekStore(const std::string& data_dir) {
  return std::make_unique<FileStore>(absl::StrCat(data_dir, "/kek.sealed"));
}

absl::StatusOr<std::unique_ptr<SealedKekStore>> EtcdSealedKekStore(etcd::EtcdOptions etcd,
                                                                   const std::string& prefix) {
  absl::StatusOr<std::unique_ptr<etcd::EtcdClient>> client =
      etcd::EtcdClient::Create(std::move(etcd));
  if (!client.ok()) return client.status();
  return std::make_unique<EtcdStore>(*std::move(client), etcd::Layout(prefix).SealedKek());
}

}  // namespace sealbox::server::custody
