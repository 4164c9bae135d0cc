#include "server/custody/sealed_kek_store.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/keystore/etcd/etcd_client.h"
#include "server/keystore/etcd/layout.h"
#include "server/keystore/file/durable_file.h"

namespace sealbox::server::custody {
namespace {

absl::Status Errno(absl::string_view doing, const std::string& path) {
  return absl::UnavailableError(absl::StrCat(doing, " ", path, ": ", std::strerror(errno)));
}

class FileStore final : public SealedKekStore {
 public:
  explicit FileStore(std::string path) : path_(std::move(path)) {}

  std::string Describe() const override { return path_; }

  absl::StatusOr<std::optional<std::string>> Read() override {
    absl::StatusOr<FileRead> read = ReadFile(path_);
    if (absl::IsNotFound(read.status())) return std::nullopt;
    if (!read.ok()) return read.status();
    return std::string(read->bytes.begin(), read->bytes.end());
  }

  // A temporary file, fsynced, then link(2)ed to the name: link never replaces, so
  // the first writer wins and nobody sees a half-written file.
  absl::StatusOr<std::string> CreateIfAbsent(const std::string& sealed) override {
    const std::string temp = absl::StrCat(path_, ".tmp.", getpid());
    int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return Errno("cannot create", temp);
    const bool written = write(fd, sealed.data(), sealed.size()) ==
                             static_cast<ssize_t>(sealed.size()) &&
                         fsync(fd) == 0;
    close(fd);
    if (!written) {
      absl::Status failed = Errno("cannot write", temp);
      unlink(temp.c_str());
      return failed;
    }
    const int linked = link(temp.c_str(), path_.c_str());
    const int link_errno = errno;
    unlink(temp.c_str());
    if (linked != 0 && link_errno != EEXIST) {
      errno = link_errno;
      return Errno("cannot create", path_);
    }
    if (absl::Status synced = SyncDirectoryOf(path_); !synced.ok()) return synced;
    absl::StatusOr<std::optional<std::string>> there = Read();
    if (!there.ok()) return there.status();
    if (!there->has_value()) return absl::UnavailableError(absl::StrCat(path_, " vanished"));
    return **there;
  }

 private:
  static absl::Status SyncDirectoryOf(const std::string& path) {
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
    int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Errno("cannot open", dir);
    const int synced = fsync(fd);
    close(fd);
    if (synced != 0) return Errno("cannot fsync", dir);
    return absl::OkStatus();
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

  absl::StatusOr<std::optional<std::string>> Read() override {
    etcdserverpb::RangeRequest request;
    request.set_key(key_);
    absl::StatusOr<etcdserverpb::RangeResponse> response = client_->Range(request);
    if (!response.ok()) return response.status();
    if (response->kvs_size() == 0) return std::nullopt;
    return response->kvs(0).value();
  }

  // One transaction: put if the key was never created, else read what is there.
  absl::StatusOr<std::string> CreateIfAbsent(const std::string& sealed) override {
    etcdserverpb::TxnRequest txn;
    etcdserverpb::Compare* absent = txn.add_compare();
    absent->set_key(key_);
    absent->set_target(etcdserverpb::Compare_CompareTarget_CREATE);
    absent->set_result(etcdserverpb::Compare_CompareResult_EQUAL);
    absent->set_create_revision(0);
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(key_);
    put->set_value(sealed);
    txn.add_failure()->mutable_request_range()->set_key(key_);
    absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(txn);
    if (!response.ok()) return response.status();
    if (response->succeeded()) return sealed;
    const etcdserverpb::RangeResponse& there = response->responses(0).response_range();
    if (there.kvs_size() == 0) return absl::AbortedError(absl::StrCat(key_, " vanished"));
    return there.kvs(0).value();
  }

 private:
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
