#include "server/process/keystore_transfer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/keystore/etcd/etcd_storage.h"
#include "server/process/storage_from_config.h"

namespace sealbox::server {
namespace {

// Loads a store that must already hold a keystore.
absl::StatusOr<KeystoreContents> LoadExisting(KeystoreStorage& storage) {
  if (auto prepared = storage.Prepare(/*create=*/false); !prepared.ok()) {
    return prepared.status();
  }
  return storage.Load();
}

// Both keystores hold the same records (in whatever order they were written).
absl::Status Verify(KeystoreContents& original, KeystoreContents& copy, const std::string& where) {
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

// Loads `from`, imports it into `to`, reads `to` back and compares.
absl::StatusOr<std::string> Copy(KeystoreStorage& from, KeystoreStorage& to) {
  auto original = LoadExisting(from);
  if (!original.ok()) return original.status();
  if (absl::Status s = to.Import(*original); !s.ok()) return s;
  auto copy = to.Load();
  if (!copy.ok()) return copy.status();
  const std::string summary = Summary(*copy);
  if (absl::Status s = Verify(*original, *copy, to.Describe()); !s.ok()) return s;
  return absl::StrCat("copied ", summary, " from the ", from.Describe(), " to the ", to.Describe(),
                      ", and read them back the same");
}

}  // namespace

absl::StatusOr<std::string> MigrateKeystoreToEtcd(const ServerConfig& config) {
  auto file = OpenFileStorage(config);
  if (!file.ok()) return file.status();
  auto etcd = OpenEtcdStorage(config);
  if (!etcd.ok()) return etcd.status();
  return Copy(**file, **etcd);
}

absl::StatusOr<std::string> ExportKeystoreFromEtcd(const ServerConfig& config) {
  auto etcd = OpenEtcdStorage(config);
  if (!etcd.ok()) return etcd.status();
  auto file = OpenFileStorage(config);
  if (!file.ok()) return file.status();
  return Copy(**etcd, **file);
}

}  // namespace sealbox::server
