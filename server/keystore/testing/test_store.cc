#include "server/keystore/testing/test_store.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdlib.h>

#include <atomic>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "server/keystore/etcd/etcd_storage.h"
#include "server/keystore/file/file_storage.h"

namespace sealbox::server::testing {
namespace {

std::string NewTempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/ks.XXXXXX");
  if (mkdtemp(dir.data()) == nullptr) abort();
  return dir;
}

class FileTestStore : public TestStore {
 public:
  std::string backend() const override { return "file"; }
  absl::StatusOr<std::unique_ptr<KeystoreStorage>> NewStorage(const Kek& kek,
                                                              const Kek* previous_kek) override {
    FileStorageOptions options;
    options.data_dir = data_dir_;
    options.kek = kek.Clone();
    if (previous_kek != nullptr) options.previous_kek = previous_kek->Clone();
    auto storage = FileStorage::Create(std::move(options));
    if (!storage.ok()) return storage.status();
    return std::unique_ptr<KeystoreStorage>(*std::move(storage));
  }

 private:
  const std::string data_dir_ = NewTempDir() + "/data";  // made by Prepare
};

// Every etcd test store of a test binary shares one etcd, each under a prefix of its
// own.
class EtcdTestStore : public TestStore {
 public:
  std::string backend() const override { return "etcd"; }
  absl::StatusOr<std::unique_ptr<KeystoreStorage>> NewStorage(const Kek& kek,
                                                              const Kek* previous_kek) override {
    auto* cluster = SharedEtcd();
    if (cluster == nullptr) return absl::UnavailableError("etcd did not start");
    etcd::EtcdStorageOptions options;
    options.etcd.endpoints = cluster->endpoints();
    options.prefix = prefix_;
    options.kek = kek.Clone();
    if (previous_kek != nullptr) options.previous_kek = previous_kek->Clone();
    options.page_size = 7;  // small pages, so every test pages
    auto storage = etcd::EtcdStorage::Create(std::move(options));
    if (!storage.ok()) return storage.status();
    return std::unique_ptr<KeystoreStorage>(*std::move(storage));
  }

 private:
  const std::string prefix_ = absl::StrCat("/test-", NextId(), "/");
  static int NextId() {
    static std::atomic<int> next{0};
    return next++;
  }
};

}  // namespace

EtcdCluster* SharedEtcd() {
  static EtcdCluster* cluster = [] {
    auto started = EtcdCluster::Start(1);
    if (!started.ok()) {
      fprintf(stderr, "starting etcd: %s\n", std::string(started.status().message()).c_str());
      return static_cast<EtcdCluster*>(nullptr);
    }
    return started->release();  // lives as long as the test binary; killed at exit
  }();
  return cluster;
}

Kek RandomKek() {
  uint8_t bytes[kKekBytes];
  RAND_bytes(bytes, sizeof(bytes));
  Kek kek = *Kek::FromBytes(bytes);
  OPENSSL_cleanse(bytes, sizeof(bytes));
  return kek;
}

std::unique_ptr<TestStore> NewTestStore(const std::string& backend) {
  if (backend == "file") return std::make_unique<FileTestStore>();
  if (backend == "etcd") return std::make_unique<EtcdTestStore>();
  return nullptr;
}

std::vector<std::string> AllBackends() { return {"file", "etcd"}; }

absl::StatusOr<std::unique_ptr<Keystore>> OpenKeystore(TestStore& store, const Kek& kek,
                                                       bool create, const Kek* previous_kek,
                                                       absl::Duration min_rotation_period) {
  auto storage = store.NewStorage(kek, previous_kek);
  if (!storage.ok()) return storage.status();
  KeystoreOpenOptions options;
  options.create = create;
  options.min_rotation_period = min_rotation_period;
  return Keystore::Open(*std::move(storage), std::move(options));
}

}  // namespace sealbox::server::testing
