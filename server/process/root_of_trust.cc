#include "server/process/root_of_trust.h"

#include <openssl/rand.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "crypto/secret/secret_bytes.h"
#include "server/custody/pkcs11_root_key.h"
#include "server/custody/sealed_kek.h"
#include "server/custody/sealed_kek_store.h"
#include "server/keystore/file/durable_file.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

// How long a start waits for an etcd that does not answer before it gives up (the
// orchestrator restarts it).
constexpr absl::Duration kStorePatience = absl::Minutes(1);

absl::StatusOr<std::unique_ptr<custody::SealedKekStore>> StoreFor(const ServerConfig& config) {
  if (config.uses_etcd()) return custody::EtcdSealedKekStore(config.etcd, config.etcd_prefix);
  if (config.data_dir.empty()) {
    return absl::InvalidArgumentError("give --data-dir or --etcd-endpoints");
  }
  if (config.create_keystore) {
    if (absl::Status s = MakeDirectories(config.data_dir, 0700); !s.ok()) return s;
  }
  return custody::FileSealedKekStore(config.data_dir);
}

// One attempt: the sealed KEK there, or (when `create`) a new KEK sealed and written
// unless another replica's --init wrote one first.
absl::StatusOr<custody::SealedKekStore::Stored> ReadOrCreateOnce(custody::SealedKekStore& store,
                                                                 custody::RootKey& root,
                                                                 bool create, RootOfTrust& trust) {
  absl::StatusOr<std::optional<custody::SealedKekStore::Stored>> read = store.Read();
  if (!read.ok()) return read.status();
  if (read->has_value()) return **std::move(read);
  if (!create) {
    return absl::NotFoundError(absl::StrCat(
        "no sealed KEK at ", store.Describe(),
        ": start once with --init to create the keystore's KEK sealed by ", root.Describe()));
  }
  crypto::SecretBytes fresh(kKekBytes);
  if (RAND_bytes(fresh.data(), fresh.size()) != 1) return absl::InternalError("RAND_bytes failed");
  absl::StatusOr<Kek> kek = Kek::FromBytes(fresh.span());
  if (!kek.ok()) return kek.status();
  absl::StatusOr<std::string> sealed = custody::SealKek(root, *kek, absl::Now());
  // Not retried like the store: an HSM that cannot seal now is for the operator.
  if (!sealed.ok()) return absl::FailedPreconditionError(sealed.status().message());
  absl::StatusOr<custody::SealedKekStore::Stored> there = store.CreateIfAbsent(*sealed);
  if (there.ok()) trust.created_kek = there->bytes == *sealed;
  return there;
}

// Reads the sealed KEK, creating it when allowed and absent; retries an unreachable
// store until kStorePatience has passed.
absl::StatusOr<custody::SealedKekStore::Stored> ReadOrCreate(custody::SealedKekStore& store,
                                                             custody::RootKey& root, bool create,
                                                             RootOfTrust& trust) {
  const absl::Time give_up = absl::Now() + kStorePatience;
  absl::Duration pause = absl::Milliseconds(200);
  while (true) {
    absl::StatusOr<custody::SealedKekStore::Stored> found =
        ReadOrCreateOnce(store, root, create, trust);
    if (found.ok() || !absl::IsUnavailable(found.status()) || absl::Now() + pause > give_up) {
      return found;
    }
    Log("sealed_kek_unreachable", "warning")
        .Add("store", store.Describe())
        .Add("error", found.status().message());
    absl::SleepFor(pause);
    pause = std::min(pause * 2, absl::Seconds(5));
  }
}

}  // namespace

absl::StatusOr<RootOfTrust> UnsealKek(ServerConfig& config) {
  RootOfTrust trust;
  custody::HsmOptions options = std::move(*config.hsm);
  config.hsm.reset();
  trust.check_interval = options.check_interval;
  options.create_key = options.create_key && config.create_keystore;
  absl::StatusOr<std::unique_ptr<custody::Pkcs11RootKey>> hsm =
      custody::Pkcs11RootKey::Open(std::move(options));
  if (!hsm.ok()) return hsm.status();
  trust.created_root_key = (*hsm)->created_key();
  trust.root_key = *std::move(hsm);
  if (trust.created_root_key) {
    Log("root_key_created").Add("root_key", trust.root_key->Describe());
  }

  absl::StatusOr<std::unique_ptr<custody::SealedKekStore>> store = StoreFor(config);
  if (!store.ok()) return store.status();
  trust.store = *std::move(store);
  trust.sealed_kek_at = trust.store->Describe();
  absl::StatusOr<custody::SealedKekStore::Stored> sealed =
      ReadOrCreate(*trust.store, *trust.root_key, config.create_keystore, trust);
  if (!sealed.ok()) return sealed.status();
  trust.source =
      std::make_unique<custody::SealedKekSource>(trust.root_key.get(), trust.store.get());
  absl::StatusOr<std::shared_ptr<const KekRing>> keks = trust.source->Adopt(*sealed);
  if (!keks.ok()) return keks.status();
  absl::StatusOr<custody::SealedKekInfo> info = custody::InfoOf(sealed->bytes, trust.sealed_kek_at);
  if (!info.ok()) return info.status();
  trust.kek_fingerprint = info->fingerprint;
  if (config.previous_kek.has_value()) {
    // Moving a keystore from --kek-file under the HSM: the old KEK is read too until
    // the keystore is rewrapped at open.
    std::vector<Kek> previous;
    for (const Kek& kek : (*keks)->previous) previous.push_back(kek.Clone());
    previous.push_back(*std::move(config.previous_kek));
    config.previous_kek.reset();
    keks = std::make_shared<const KekRing>((*keks)->current.Clone(), std::move(previous),
                                           (*keks)->sealed_revision);
  }
  config.keks = *std::move(keks);
  config.kek_source = trust.source.get();
  Log(trust.created_kek ? "kek_created" : "kek_unsealed")
      .Add("root_key", trust.root_key->Describe())
      .Add("sealed_kek", trust.sealed_kek_at)
      .Add("kek_fingerprint", trust.kek_fingerprint)
      .Add("previous_keks", static_cast<int64_t>(info->previous));
  return trust;
}

}  // namespace sealbox::server
