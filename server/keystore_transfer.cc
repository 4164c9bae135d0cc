#include "server/keystore_transfer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/keystore/etcd/etcd_storage.h"
#include "server/keystore/file_storage.h"

namespace sealbox::server {
namespace {

absl::StatusOr<std::unique_ptr<FileStorage>> FileOf(const ServerConfig& config) {
  FileStorageOptions options;
  options.data_dir = config.data_dir;
  options.kek = config.kek.Clone();
  options.previous_kek = config.previous_kek.Clone();
  return FileStorage::Create(std::move(options));
}

absl::StatusOr<std::unique_ptr<etcd::EtcdStorage>> EtcdOf(const ServerConfig& config) {
  etcd::EtcdStorageOptions options;
  options.etcd = config.etcd;
  options.prefix = config.etcd_prefix;
  options.kek = config.kek.Clone();
  options.previous_kek = config.previous_kek.Clone();
  return etcd::EtcdStorage::Create(std::move(options));
}

// Loads a store that must already hold a keystore.
absl::StatusOr<KeystoreContents> LoadExisting(KeystoreStorage& storage) {
  if (auto prepared = storage.Prepare(/*create=*/false); !prepared.ok()) {
    return prepared.status();
  }
  return storage.Load();
}

// Both keystores hold the same records (in whatever order they were written).
absl::Status Verify(KeystoreContents& original, KeystoreContents& copy,
                    const std::string& where) {
  SortKeystore(original.file);
  SortKeystore(copy.file);
  crypto::SecretBytes a(original.file.ByteSizeLong()), b(copy.file.ByteSizeLong());
  if (a.size() == b.size() && original.file.SerializeToArray(a.data(), a.size()) &&
      copy.file.SerializeToArray(b.data(), b.size()) &&
      std::equal(a.span().begin(), a.span().end(), b.span().begin())) {
    return absl::OkStatus();
  }
  return absl::DataLossError(
      absl::StrCat("the copy in the ", where, " does not read back the same"));
}

std::string Summary(const KeystoreContents& contents) {
  int keys = 0, tokens = 0;
  for (const internal::Tenant& t : contents.file.tenants()) {
    keys += t.keys_size();
    tokens += t.tokens_size();
  }
  return absl::StrCat(contents.file.tenants_size(), " tenants, ", keys, " keys, ", tokens,
                      " tokens");
}

}  // namespace

absl::StatusOr<std::string> MigrateKeystoreToEtcd(const ServerConfig& config) {
  auto file = FileOf(config);
  if (!file.ok()) return file.status();
  auto etcd = EtcdOf(config);
  if (!etcd.ok()) return etcd.status();
  auto original = LoadExisting(**file);
  if (!original.ok()) return original.status();
  if (absl::Status s = (*etcd)->Import(*original); !s.ok()) return s;
  auto copy = (*etcd)->Load();
  if (!copy.ok()) return copy.status();
  if (absl::Status s = Verify(*original, *copy, (*etcd)->Describe()); !s.ok()) return s;
  return absl::StrCat("copied ", Summary(*copy), " from the ", (*file)->Describe(),
                      " to the ", (*etcd)->Describe(), " (revision ", copy->generation,
                      "), and read them back the same");
}

absl::StatusOr<std::string> ExportKeystoreFromEtcd(const ServerConfig& config) {
  auto etcd = EtcdOf(config);
  if (!etcd.ok()) return etcd.status();
  auto file = FileOf(config);
  if (!file.ok()) return file.status();
  auto original = LoadExisting(**etcd);
  if (!original.ok()) return original.status();
  if (absl::Status s = (*file)->WriteNew(*original); !s.ok()) return s;
  auto copy = (*file)->Load();
  if (!copy.ok()) return copy.status();
  if (absl::Status s = Verify(*original, *copy, (*file)->Describe()); !s.ok()) return s;
  return absl::StrCat("copied ", Summary(*copy), " from the ", (*etcd)->Describe(),
                      " (revision ", original->generation, ") to the ",
                      (*file)->Describe(), ", and read them back the same");
}

}  // namespace sealbox::server
