#include "server/keystore/keystore.h"

#include <openssl/rand.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/keystore/durable_file.h"
#include "server/keystore/keystore_file.h"
#include "server/keystore/names.h"
#include "server/keystore/tokens.h"

namespace sealbox::server {
namespace {

constexpr size_t kMaxDescriptionBytes = 256;

absl::Status ValidateRef(const std::string& tenant, const std::string& key) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  return ValidateKeyName(key);
}

int64_t NowUnix() { return absl::ToUnixSeconds(absl::Now()); }

// Material bytes per algorithm; 0 for none we know.
size_t MaterialBytes(v1::Algorithm algorithm) {
  switch (algorithm) {
    case v1::AES_128_GCM:
      return 16;
    case v1::AES_256_GCM:
      return 32;
    default:
      return 0;
  }
}

absl::StatusOr<crypto::SecretBytes> RandomMaterial(v1::Algorithm algorithm) {
  crypto::SecretBytes material(MaterialBytes(algorithm));
  if (material.empty() || RAND_bytes(material.data(), material.size()) != 1) {
    return absl::InternalError("generating key material failed");
  }
  return material;
}

absl::StatusOr<internal::Tenant*> FindTenant(internal::KeystoreFile& file,
                                             const std::string& name) {
  for (internal::Tenant& tenant : *file.mutable_tenants()) {
    if (tenant.name() == name) return &tenant;
  }
  return absl::NotFoundError(absl::StrCat("tenant ", name, " not found"));
}

internal::Key* FindKeyIn(internal::Tenant& tenant, const std::string& name) {
  for (internal::Key& key : *tenant.mutable_keys()) {
    if (key.name() == name) return &key;
  }
  return nullptr;
}

absl::StatusOr<internal::Key*> FindKey(internal::KeystoreFile& file,
                                       const std::string& tenant,
                                       const std::string& name) {
  auto t = FindTenant(file, tenant);
  if (!t.ok()) return t.status();
  if (internal::Key* key = FindKeyIn(**t, name)) return key;
  return absl::NotFoundError(absl::StrCat("key ", tenant, "/", name, " not found"));
}

absl::StatusOr<internal::KeyVersion*> FindVersion(internal::Key& key, uint32_t version) {
  for (internal::KeyVersion& v : *key.mutable_versions()) {
    if (v.version() == version) return &v;
  }
  return absl::NotFoundError(
      absl::StrCat("key ", key.name(), " has no version ", version));
}

// Appends a version (one past the highest so far) and makes it primary.
void AddPrimaryVersion(internal::Key& key, absl::Span<const uint8_t> material,
                       bool imported) {
  uint32_t next = 1;
  for (const internal::KeyVersion& v : key.versions()) {
    next = std::max(next, v.version() + 1);
  }
  internal::KeyVersion* version = key.add_versions();
  version->set_version(next);
  version->set_state(v1::ENABLED);
  version->set_material(material.data(), material.size());
  version->set_imported(imported);
  version->set_create_time_unix(NowUnix());
  key.set_primary_version(next);
  if (key.min_decryption_version() == 0) key.set_min_decryption_version(1);
}

internal::Key* AddKey(internal::Tenant& tenant, const std::string& name,
                      v1::Algorithm algorithm) {
  internal::Key* key = tenant.add_keys();
  key->set_name(name);
  key->set_algorithm(algorithm);
  return key;
}

absl::Status RotateFirst(const internal::Key& key, uint32_t version) {
  return absl::FailedPreconditionError(absl::StrCat("version ", version,
                                                    " is the primary version of key ",
                                                    key.name(), "; rotate first"));
}

absl::StatusOr<v1::Key> KeyIn(const absl::StatusOr<std::shared_ptr<const Snapshot>>& snap,
                              const std::string& tenant, const std::string& key) {
  if (!snap.ok()) return snap.status();
  return (*snap)->FindKey(tenant, key)->ToProto();
}

}  // namespace

struct Keystore::State {
  explicit State(KeystoreOptions o)
      : options(std::move(o)),
        path(options.data_dir + "/keystore.sbx"),
        lock_path(options.data_dir + "/keystore.lock") {}

  const KeystoreOptions options;
  const std::string path;
  const std::string lock_path;
  // One writer or reload at a time in this process; flock excludes other processes.
  std::mutex mu;
  FileIdentity loaded;  // the file the snapshot came from; guarded by mu
  bool rewrapped_at_open = false;
  // Read and written only with std::atomic_load / std::atomic_store.
  std::shared_ptr<const Snapshot> snapshot;
};

Keystore::Keystore(std::unique_ptr<State> state) : state_(std::move(state)) {}
Keystore::~Keystore() = default;

absl::StatusOr<std::unique_ptr<Keystore>> Keystore::Open(KeystoreOptions options) {
  if (options.kek.size() != kKekBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the KEK must be ", kKekBytes, " bytes, not ", options.kek.size()));
  }
  if (!options.previous_kek.empty() && options.previous_kek.size() != kKekBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the previous KEK must be ", kKekBytes, " bytes, not ", options.previous_kek.size()));
  }
  if (options.data_dir.empty()) return absl::InvalidArgumentError("no data directory");
  std::unique_ptr<Keystore> keystore(
      new Keystore(std::make_unique<State>(std::move(options))));
  const State& s = *keystore->state_;

  absl::StatusOr<FileRead> read = ReadFile(s.path);
  if (absl::IsNotFound(read.status()) && s.options.create_if_missing) {
    if (absl::Status made = MakeDirectories(s.options.data_dir, 0700); !made.ok()) {
      return made;
    }
    auto lock = FileLock::Acquire(s.lock_path);
    if (!lock.ok()) return lock.status();
    read = ReadFile(s.path);  // another replica may have created it meanwhile
    if (absl::IsNotFound(read.status())) {
      KeystoreContents empty;
      empty.generation = 1;
      auto bytes = SealKeystore(s.options.kek, empty);
      if (!bytes.ok()) return bytes.status();
      auto written =
          ReplaceFile(s.path, *bytes, s.options.fail_before_rename_for_testing);
      if (!written.ok()) return written.status();
      read = ReadFile(s.path);
    }
  }
  if (absl::IsNotFound(read.status())) {
    return absl::NotFoundError(absl::StrCat("keystore ", s.path, " does not exist"));
  }
  if (!read.ok()) return read.status();
  if (absl::Status loaded = keystore->Load(*read); !loaded.ok()) return loaded;
  if (&keystore->KekFor(*read) != &s.options.kek) {
    // Under the previous KEK: rewrite it under the current one now (a change with
    // nothing changed), so the previous KEK can be retired once every replica runs
    // with the current one.
    auto rewrapped = keystore->Commit([](internal::KeystoreFile&) { return absl::OkStatus(); });
    if (!rewrapped.ok()) return rewrapped.status();
    keystore->state_->rewrapped_at_open = true;
  }
  return keystore;
}

bool Keystore::rewrapped_at_open() const { return state_->rewrapped_at_open; }

const crypto::SecretBytes& Keystore::KekFor(const FileRead& read) const {
  const KeystoreOptions& options = state_->options;
  if (!options.previous_kek.empty() && WrittenWithKek(options.previous_kek, read.bytes)) {
    return options.previous_kek;
  }
  return options.kek;  // or neither: opening then says "a different KEK"
}

std::shared_ptr<const Snapshot> Keystore::snapshot() const {
  return std::atomic_load(&state_->snapshot);
}

absl::Status Keystore::Load(const FileRead& read) {
  auto contents = OpenKeystore(KekFor(read), read.bytes, state_->path);
  if (!contents.ok()) return contents.status();
  auto next = Snapshot::Build(*contents, snapshot().get());
  if (!next.ok()) return next.status();
  std::atomic_store(&state_->snapshot, *std::move(next));
  state_->loaded = read.identity;
  return absl::OkStatus();
}

absl::Status Keystore::ReloadIfChanged() {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto header = ReadFile(state_->path, kKeystoreHeaderBytes);
  if (!header.ok()) return header.status();
  // The generation catches what the identity alone could miss: a reused inode
  // number with the same size and a coarse mtime.
  auto generation = PeekGeneration(header->bytes, state_->path);
  if (generation.ok() && *generation == snapshot()->generation() &&
      header->identity == state_->loaded) {
    return absl::OkStatus();
  }
  auto read = ReadFile(state_->path);
  if (!read.ok()) return read.status();
  return Load(*read);
}

// The file, not memory, is the truth: every change re-reads it under the flock,
// which costs one small decryption and keeps key material out of long-lived
// protobuf strings (the snapshot holds it in SecretBytes).
absl::StatusOr<std::shared_ptr<const Snapshot>> Keystore::Commit(
    const std::function<absl::Status(internal::KeystoreFile&)>& change) {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto file_lock = FileLock::Acquire(state_->lock_path);
  if (!file_lock.ok()) return file_lock.status();
  auto read = ReadFile(state_->path);
  if (!read.ok()) return read.status();
  auto contents = OpenKeystore(KekFor(*read), read->bytes, state_->path);
  if (!contents.ok()) return contents.status();
  if (absl::Status changed = change(contents->file); !changed.ok()) return changed;
  ++contents->generation;
  auto next = Snapshot::Build(*contents, snapshot().get());
  if (!next.ok()) return next.status();
  auto bytes = SealKeystore(state_->options.kek, *contents);
  if (!bytes.ok()) return bytes.status();
  auto written =
      ReplaceFile(state_->path, *bytes, state_->options.fail_before_rename_for_testing);
  if (!written.ok()) return written.status();
  std::atomic_store(&state_->snapshot, *next);
  state_->loaded = *written;
  return *next;
}

absl::StatusOr<v1::Tenant> Keystore::CreateTenant(const std::string& name) {
  if (absl::Status s = ValidateTenantName(name); !s.ok()) return s;
  auto snap = Commit([&](internal::KeystoreFile& file) {
    if (FindTenant(file, name).ok()) {
      return absl::AlreadyExistsError(absl::StrCat("tenant ", name, " already exists"));
    }
    file.add_tenants()->set_name(name);
    return absl::OkStatus();
  });
  if (!snap.ok()) return snap.status();
  return (*snap)->FindTenant(name)->ToProto();
}

absl::Status Keystore::DeleteTenant(const std::string& name) {
  if (absl::Status s = ValidateTenantName(name); !s.ok()) return s;
  auto snap = Commit([&](internal::KeystoreFile& file) {
    auto& tenants = *file.mutable_tenants();
    for (auto it = tenants.begin(); it != tenants.end(); ++it) {
      if (it->name() != name) continue;
      for (internal::Key& key : *it->mutable_keys()) {
        for (internal::KeyVersion& v : *key.mutable_versions()) WipeMaterial(v);
      }
      tenants.erase(it);
      return absl::OkStatus();
    }
    return absl::NotFoundError(absl::StrCat("tenant ", name, " not found"));
  });
  return snap.status();
}

absl::StatusOr<std::vector<v1::Tenant>> Keystore::ListTenants() const {
  std::vector<v1::Tenant> out;
  for (const auto& [name, tenant] : snapshot()->tenants()) {
    out.push_back(tenant.ToProto());
  }
  return out;
}

absl::StatusOr<v1::IssueTokenResponse> Keystore::IssueToken(
    const std::string& tenant, const std::string& description) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  if (description.size() > kMaxDescriptionBytes) {
    return absl::InvalidArgumentError(absl::StrCat("token description must be at most ",
                                                   kMaxDescriptionBytes, " bytes"));
  }
  auto token = GenerateToken();
  if (!token.ok()) return token.status();
  v1::IssueTokenResponse response;
  response.set_token(token->token);
  v1::TokenInfo& info = *response.mutable_info();
  info.set_id(token->id);
  info.set_description(description);
  info.set_create_time_unix(NowUnix());
  auto snap = Commit([&](internal::KeystoreFile& file) {
    auto t = FindTenant(file, tenant);
    if (!t.ok()) return t.status();
    internal::Token* stored = (*t)->add_tokens();
    stored->set_id(info.id());
    stored->set_sha256(token->sha256);
    stored->set_description(info.description());
    stored->set_create_time_unix(info.create_time_unix());
    return absl::OkStatus();
  });
  if (!snap.ok()) return snap.status();
  return response;
}

absl::Status Keystore::RevokeToken(const std::string& tenant,
                                   const std::string& token_id) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  auto snap = Commit([&](internal::KeystoreFile& file) {
    auto t = FindTenant(file, tenant);
    if (!t.ok()) return t.status();
    auto& tokens = *(*t)->mutable_tokens();
    for (auto it = tokens.begin(); it != tokens.end(); ++it) {
      if (it->id() == token_id) {
        tokens.erase(it);
        return absl::OkStatus();
      }
    }
    // Not echoed: a token pasted in place of its id must not reach a log.
    return absl::NotFoundError(
        absl::StrCat("tenant ", tenant, " has no token with that id"));
  });
  return snap.status();
}

absl::StatusOr<v1::Key> Keystore::CreateKey(const std::string& tenant,
                                            const std::string& key,
                                            v1::Algorithm algorithm) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  if (algorithm == v1::ALGORITHM_UNSPECIFIED) algorithm = v1::AES_256_GCM;
  if (MaterialBytes(algorithm) == 0) {
    return absl::InvalidArgumentError("algorithm must be AES_128_GCM or AES_256_GCM");
  }
  auto material = RandomMaterial(algorithm);
  if (!material.ok()) return material.status();
  auto snap = Commit([&](internal::KeystoreFile& file) {
    auto t = FindTenant(file, tenant);
    if (!t.ok()) return t.status();
    if (FindKeyIn(**t, key) != nullptr) {
      return absl::AlreadyExistsError(
          absl::StrCat("key ", tenant, "/", key, " already exists"));
    }
    AddPrimaryVersion(*AddKey(**t, key, algorithm), material->span(),
                      /*imported=*/false);
    return absl::OkStatus();
  });
  return KeyIn(snap, tenant, key);
}

absl::StatusOr<v1::Key> Keystore::ImportKey(const std::string& tenant,
                                            const std::string& key,
                                            absl::Span<const uint8_t> material) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  const v1::Algorithm algorithm = material.size() == 16   ? v1::AES_128_GCM
                                  : material.size() == 32 ? v1::AES_256_GCM
                                                          : v1::ALGORITHM_UNSPECIFIED;
  if (algorithm == v1::ALGORITHM_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("key material must be 16 or 32 bytes, not ", material.size()));
  }
  auto snap = Commit([&](internal::KeystoreFile& file) {
    auto t = FindTenant(file, tenant);
    if (!t.ok()) return t.status();
    internal::Key* existing = FindKeyIn(**t, key);
    if (existing != nullptr && existing->algorithm() != algorithm) {
      return absl::InvalidArgumentError(absl::StrCat(
          "key ", tenant, "/", key, " is ", v1::Algorithm_Name(existing->algorithm()),
          " (", MaterialBytes(existing->algorithm()), "-byte material), not ",
          material.size(), " bytes"));
    }
    AddPrimaryVersion(existing ? *existing : *AddKey(**t, key, algorithm), material,
                      /*imported=*/true);
    return absl::OkStatus();
  });
  return KeyIn(snap, tenant, key);
}

absl::StatusOr<v1::Key> Keystore::RotateKey(const std::string& tenant,
                                            const std::string& key) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  auto snap = Commit([&](internal::KeystoreFile& file) {
    auto k = FindKey(file, tenant, key);
    if (!k.ok()) return k.status();
    auto material = RandomMaterial((*k)->algorithm());
    if (!material.ok()) return material.status();
    AddPrimaryVersion(**k, material->span(), /*imported=*/false);
    return absl::OkStatus();
  });
  return KeyIn(snap, tenant, key);
}

absl::StatusOr<v1::Key> Keystore::GetKey(const std::string& tenant,
                                         const std::string& key) const {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  auto snap = snapshot();
  if (snap->FindTenant(tenant) == nullptr) {
    return absl::NotFoundError(absl::StrCat("tenant ", tenant, " not found"));
  }
  const KeyEntry* entry = snap->FindKey(tenant, key);
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat("key ", tenant, "/", key, " not found"));
  }
  return entry->ToProto();
}

absl::StatusOr<std::vector<v1::Key>> Keystore::ListKeys(const std::string& tenant) const {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  auto snap = snapshot();
  const TenantEntry* entry = snap->FindTenant(tenant);
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat("tenant ", tenant, " not found"));
  }
  std::vector<v1::Key> out;
  for (const auto& [name, key] : entry->keys) out.push_back(key.ToProto());
  return out;
}

absl::StatusOr<v1::Key> Keystore::SetMinDecryptionVersion(const std::string& tenant,
                                                          const std::string& key,
                                                          uint32_t version) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  if (version == 0) {
    return absl::InvalidArgumentError("the minimum decryption version must be >= 1");
  }
  auto snap = Commit([&](internal::KeystoreFile& file) {
    auto k = FindKey(file, tenant, key);
    if (!k.ok()) return k.status();
    if (version > (*k)->primary_version()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the minimum decryption version ", version,
                       " would be above the primary version ", (*k)->primary_version(),
                       " of key ", tenant, "/", key, "; rotate first"));
    }
    (*k)->set_min_decryption_version(version);
    return absl::OkStatus();
  });
  return KeyIn(snap, tenant, key);
}

absl::StatusOr<v1::Key> Keystore::SetVersionState(const std::string& tenant,
                                                  const std::string& key,
                                                  uint32_t version,
                                                  v1::KeyVersionState state) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  if (state != v1::ENABLED && state != v1::DISABLED) {
    return absl::InvalidArgumentError("a version can only be set ENABLED or DISABLED");
  }
  auto snap = Commit([&](internal::KeystoreFile& file) {
    auto k = FindKey(file, tenant, key);
    if (!k.ok()) return k.status();
    auto v = FindVersion(**k, version);
    if (!v.ok()) return v.status();
    if ((*v)->state() == v1::DESTROYED) {
      return absl::FailedPreconditionError(absl::StrCat(
          "version ", version, " of key ", tenant, "/", key, " is destroyed"));
    }
    if (state == v1::DISABLED && version == (*k)->primary_version()) {
      return RotateFirst(**k, version);
    }
    (*v)->set_state(state);
    return absl::OkStatus();
  });
  return KeyIn(snap, tenant, key);
}

absl::StatusOr<v1::Key> Keystore::DestroyVersion(const std::string& tenant,
                                                 const std::string& key,
                                                 uint32_t version) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  auto snap = Commit([&](internal::KeystoreFile& file) {
    auto k = FindKey(file, tenant, key);
    if (!k.ok()) return k.status();
    auto v = FindVersion(**k, version);
    if (!v.ok()) return v.status();
    if (version == (*k)->primary_version()) return RotateFirst(**k, version);
    WipeMaterial(**v);
    (*v)->set_state(v1::DESTROYED);
    return absl::OkStatus();
  });
  return KeyIn(snap, tenant, key);
}

}  // namespace sealbox::server
