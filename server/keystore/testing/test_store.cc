#include "server/keystore/testing/test_store.h"

#include <openssl/rand.h>
#include <stdlib.h>

#include "absl/strings/str_cat.h"
#include "server/keystore/file_storage.h"

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
  absl::StatusOr<std::unique_ptr<KeystoreStorage>> NewStorage(
      const crypto::SecretBytes& kek, const crypto::SecretBytes& previous_kek) override {
    FileStorageOptions options;
    options.data_dir = data_dir_;
    options.kek = kek.Clone();
    options.previous_kek = previous_kek.Clone();
    auto storage = FileStorage::Create(std::move(options));
    if (!storage.ok()) return storage.status();
    return std::unique_ptr<KeystoreStorage>(*std::move(storage));
  }

 private:
  const std::string data_dir_ = NewTempDir() + "/data";  // made by Prepare
};

}  // namespace

crypto::SecretBytes RandomKek() {
  crypto::SecretBytes kek(32);
  RAND_bytes(kek.data(), kek.size());
  return kek;
}

std::unique_ptr<TestStore> NewTestStore(const std::string& backend) {
  if (backend == "file") return std::make_unique<FileTestStore>();
  return nullptr;
}

std::vector<std::string> AllBackends() { return {"file"}; }

absl::StatusOr<std::unique_ptr<Keystore>> OpenKeystore(
    TestStore& store, const crypto::SecretBytes& kek, bool create,
    const crypto::SecretBytes& previous_kek) {
  auto storage = store.NewStorage(kek, previous_kek);
  if (!storage.ok()) return storage.status();
  KeystoreOpenOptions options;
  options.create = create;
  return Keystore::Open(*std::move(storage), std::move(options));
}

}  // namespace sealbox::server::testing
