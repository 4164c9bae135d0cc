#include "server/keystore/file/file_storage.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

// The index of the item named `name` in a repeated field, or -1.
template <typename Repeated, typename NameOf>
int IndexOf(const Repeated& items, const std::string& name, NameOf name_of) {
  for (int i = 0; i < items.size(); ++i) {
    if (name_of(items.Get(i)) == name) return i;
  }
  return -1;
}

int TenantIndex(const internal::KeystoreFile& file, const std::string& name) {
  return IndexOf(file.tenants(), name, [](const internal::Tenant& t) { return t.name(); });
}

internal::Tenant* FindTenantIn(internal::KeystoreFile& file, const std::string& name) {
  const int i = TenantIndex(file, name);
  return i < 0 ? nullptr : file.mutable_tenants(i);
}

int KeyIndex(const internal::Tenant& tenant, const std::string& name) {
  return IndexOf(tenant.keys(), name, [](const internal::Key& k) { return k.name(); });
}

int TokenIndex(const internal::Tenant& tenant, const std::string& id) {
  return IndexOf(tenant.tokens(), id, [](const internal::Token& t) { return t.id(); });
}

void WipeImportKeys(internal::Tenant& tenant) {
  for (internal::ImportKeyPair& pair : *tenant.mutable_import_keys()) WipeImportKey(pair);
}

void WipeTenant(internal::Tenant& tenant) {
  for (internal::Key& key : *tenant.mutable_keys()) {
    for (internal::KeyVersion& version : *key.mutable_versions()) WipeMaterial(version);
  }
  WipeImportKeys(tenant);
}

std::optional<internal::Record> ReadFrom(internal::KeystoreFile& file, const RecordName& name) {
  internal::Tenant* tenant = FindTenantIn(file, name.tenant);
  if (tenant == nullptr) return std::nullopt;
  internal::Record record;
  switch (name.kind) {
    case RecordName::Kind::kTenant:
      record.mutable_tenant()->set_name(tenant->name());
      *record.mutable_tenant()->mutable_import_keys() = tenant->import_keys();
      return record;
    case RecordName::Kind::kKey:
      if (int i = KeyIndex(*tenant, name.name); i >= 0) {
        *record.mutable_key() = tenant->keys(i);
        return record;
      }
      return std::nullopt;
    case RecordName::Kind::kToken:
      if (int i = TokenIndex(*tenant, name.name); i >= 0) {
        *record.mutable_token() = tenant->tokens(i);
        return record;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

absl::Status ApplyTo(internal::KeystoreFile& file, const RecordChange& change) {
  const RecordName& name = change.name;
  auto& tenants = *file.mutable_tenants();
  internal::Tenant* tenant = FindTenantIn(file, name.tenant);
  if (name.kind == RecordName::Kind::kTenant) {
    if (change.value.has_value()) {
      if (tenant == nullptr) {
        tenant = tenants.Add();
        tenant->set_name(name.tenant);
      }
      WipeImportKeys(*tenant);
      *tenant->mutable_import_keys() = change.value->tenant().import_keys();
    } else if (tenant != nullptr) {
      WipeTenant(*tenant);
      tenants.erase(tenants.begin() + TenantIndex(file, name.tenant));
    }
    return absl::OkStatus();
  }
  if (tenant == nullptr) {
    return absl::InternalError(
        absl::StrCat("a change to ", name.ToString(), " without its tenant"));
  }
  if (name.kind == RecordName::Kind::kKey) {
    auto& keys = *tenant->mutable_keys();
    int i = KeyIndex(*tenant, name.name);
    if (i >= 0) {
      for (internal::KeyVersion& v : *keys[i].mutable_versions()) WipeMaterial(v);
    }
    if (!change.value.has_value()) {
      if (i >= 0) keys.erase(keys.begin() + i);
    } else {
      *(i >= 0 ? &keys[i] : keys.Add()) = change.value->key();
    }
    return absl::OkStatus();
  }
  auto& tokens = *tenant->mutable_tokens();
  int i = TokenIndex(*tenant, name.name);
  if (!change.value.has_value()) {
    if (i >= 0) tokens.erase(tokens.begin() + i);
  } else {
    *(i >= 0 ? &tokens[i] : tokens.Add()) = change.value->token();
  }
  return absl::OkStatus();
}

}  // namespace

// Holds the process lock and the flock from Begin until it goes away.
class FileStorage::Transaction : public StorageTransaction {
 public:
  Transaction(FileStorage* storage, std::unique_lock<std::mutex> lock, FileLock flock,
              KeystoreContents contents)
      : storage_(storage),
        lock_(std::move(lock)),
        flock_(std::move(flock)),
        contents_(std::move(contents)) {}

  absl::StatusOr<std::optional<internal::Record>> Read(const RecordName& name) override {
    return ReadFrom(contents_.file, name);
  }

  absl::StatusOr<uint64_t> Commit(std::vector<RecordChange> changes) override {
    for (const RecordChange& change : changes) {
      if (absl::Status s = ApplyTo(contents_.file, change); !s.ok()) return s;
    }
    ++contents_.generation;
    auto written = storage_->Write(contents_);
    if (!written.ok()) return written.status();
    storage_->loaded_ = *written;
    storage_->loaded_generation_ = contents_.generation;
    if (storage_->listener_ != nullptr) storage_->listener_->Reload(contents_);
    return contents_.generation;
  }

 private:
  FileStorage* storage_;
  std::unique_lock<std::mutex> lock_;
  FileLock flock_;
  KeystoreContents contents_;
};

absl::StatusOr<std::unique_ptr<FileStorage>> FileStorage::Create(FileStorageOptions options) {
  if (options.keks == nullptr) {
    auto given = GivenKeks(std::exchange(options.kek, std::nullopt),
                           std::exchange(options.previous_kek, std::nullopt));
    if (!given.ok()) return given.status();
    options.keks = *std::move(given);
  }
  if (options.data_dir.empty()) return absl::InvalidArgumentError("no data directory");
  return std::unique_ptr<FileStorage>(new FileStorage(std::move(options)));
}

FileStorage::FileStorage(FileStorageOptions options)
    : options_(std::move(options)),
      path_(options_.data_dir + "/keystore.sbx"),
      lock_path_(options_.data_dir + "/keystore.lock"),
      keks_(options_.keks, options_.kek_source) {}

FileStorage::~FileStorage() { Stop(); }

std::string FileStorage::Describe() const { return absl::StrCat("keystore ", path_); }

KekRef FileStorage::KekFor(absl::Span<const uint8_t> file) {
  return keks_.For([file](const Kek& kek) { return WrittenWithKek(kek, file); });
}

absl::StatusOr<KeystoreContents> FileStorage::Open(const FileRead& read) {
  const KekRef kek = KekFor(read.bytes);
  // None known: opening with the current one says "a different KEK" (or damage).
  return OpenKeystore(kek != nullptr ? *kek : *keks_.Current(), read.bytes, path_);
}

bool FileStorage::UnderCurrentKek(const FileRead& read) {
  return WrittenWithKek(*keks_.Current(), read.bytes);
}

absl::StatusOr<FileIdentity> FileStorage::Write(const KeystoreContents& contents) {
  // The KEK in force now, under the flock: another process on this data directory
  // may have rotated it since this one looked.
  if (keks_.has_source()) {
    if (auto fresh = keks_.Refresh(); !fresh.ok()) return fresh.status();
  }
  auto bytes = SealKeystore(*keks_.Current(), contents);
  if (!bytes.ok()) return bytes.status();
  return ReplaceFile(path_, *bytes, options_.fail_before_rename_for_testing);
}

absl::StatusOr<bool> FileStorage::Prepare(bool create) {
  std::unique_lock<std::mutex> lock(mu_);
  absl::StatusOr<FileRead> read = ReadFile(path_);
  if (absl::IsNotFound(read.status()) && create) {
    if (absl::Status made = MakeDirectories(options_.data_dir, 0700); !made.ok()) {
      return made;
    }
    auto flock = FileLock::Acquire(lock_path_);
    if (!flock.ok()) return flock.status();
    read = ReadFile(path_);  // another replica may have created it meanwhile
    if (absl::IsNotFound(read.status())) {
      KeystoreContents empty;
      empty.generation = 1;
      if (auto written = Write(empty); !written.ok()) return written.status();
      read = ReadFile(path_);
    }
  }
  if (absl::IsNotFound(read.status())) {
    return absl::NotFoundError(absl::StrCat("keystore ", path_, " does not exist"));
  }
  if (!read.ok()) return read.status();
  if (UnderCurrentKek(*read)) return false;
  // Under a KEK nobody knows: say so, rather than write anything.
  if (KekFor(read->bytes) == nullptr) return Open(*read).status();
  // Under the previous KEK: rewrite it under the current one now (a change with
  // nothing changed), so the previous KEK can be retired once every replica runs
  // with the current one.
  auto flock = FileLock::Acquire(lock_path_);
  if (!flock.ok()) return flock.status();
  read = ReadFile(path_);
  if (!read.ok()) return read.status();
  auto contents = Open(*read);
  if (!contents.ok()) return contents.status();
  ++contents->generation;
  if (auto written = Write(*contents); !written.ok()) return written.status();
  return true;
}

absl::StatusOr<uint64_t> FileStorage::RewrapAll(const RewrapPace& /*pace*/) {
  std::unique_lock<std::mutex> lock(mu_);
  auto flock = FileLock::Acquire(lock_path_);
  if (!flock.ok()) return flock.status();
  auto read = ReadFile(path_);
  if (!read.ok()) return read.status();
  if (keks_.has_source()) {
    if (auto fresh = keks_.Refresh(); !fresh.ok()) return fresh.status();
  }
  if (UnderCurrentKek(*read)) return 0;
  auto contents = Open(*read);
  if (!contents.ok()) return contents.status();
  ++contents->generation;
  if (auto written = Write(*contents); !written.ok()) return written.status();
  return RecordsOf(contents->file).size();
}

absl::StatusOr<KeystoreContents> FileStorage::Load() {
  std::unique_lock<std::mutex> lock(mu_);
  auto read = ReadFile(path_);
  if (absl::IsNotFound(read.status())) {
    return absl::NotFoundError(absl::StrCat("keystore ", path_, " does not exist"));
  }
  if (!read.ok()) return read.status();
  auto contents = Open(*read);
  if (!contents.ok()) return contents.status();
  loaded_ = read->identity;
  loaded_generation_ = contents->generation;
  return contents;
}

// The file, not memory, is the truth: every transaction re-reads it under the flock,
// which costs one small decryption and keeps key material out of long-lived protobuf
// strings (the snapshot holds it in SecretBytes).
absl::StatusOr<std::unique_ptr<StorageTransaction>> FileStorage::Begin() {
  std::unique_lock<std::mutex> lock(mu_);
  auto flock = FileLock::Acquire(lock_path_);
  if (!flock.ok()) return flock.status();
  auto read = ReadFile(path_);
  if (!read.ok()) return read.status();
  auto contents = Open(*read);
  if (!contents.ok()) return contents.status();
  return std::make_unique<Transaction>(this, std::move(lock), *std::move(flock),
                                       *std::move(contents));
}

// A read of the file that finds it unchanged, or loads it, proves the listener
// current as of the moment the read began.
absl::Status FileStorage::Refresh() {
  const auto began = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  auto header = ReadFile(path_, kKeystoreHeaderBytes);
  if (!header.ok()) return header.status();
  // The generation catches what the identity alone could miss: a reused inode
  // number with the same size and a coarse mtime.
  auto generation = PeekGeneration(header->bytes, path_);
  if (!generation.ok() || *generation != loaded_generation_ || !(header->identity == loaded_)) {
    auto read = ReadFile(path_);
    if (!read.ok()) return read.status();
    auto contents = Open(*read);
    if (!contents.ok()) return contents.status();
    loaded_ = read->identity;
    loaded_generation_ = contents->generation;
    if (listener_ != nullptr) listener_->Reload(*contents);
  }
  if (listener_ != nullptr) listener_->CurrentAsOf(began);
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> FileStorage::Barrier(absl::Duration /*timeout*/) {
  if (absl::Status s = Refresh(); !s.ok()) return s;
  return 0;
}

void FileStorage::Follow(uint64_t /*revision*/, StorageListener* listener) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    listener_ = listener;
  }
  // Replicas sharing the file pick up each other's changes here.
  poller_ = std::thread([this] {
    auto generation = [this] {
      std::unique_lock<std::mutex> lock(mu_);
      return static_cast<int64_t>(loaded_generation_);
    };
    while (!stopping_.WaitForNotificationWithTimeout(options_.poll_interval)) {
      const int64_t before = generation();
      if (absl::Status s = Refresh(); !s.ok()) {
        Log("keystore_reload_failed", "error")
            .Add("error", s.message())
            .Add("serving_generation", before);
      } else if (const int64_t after = generation(); after != before) {
        Log("keystore_reloaded").Add("generation", after);
      }
    }
  });
}

void FileStorage::Stop() {
  if (!stopping_.HasBeenNotified()) stopping_.Notify();
  if (poller_.joinable()) poller_.join();
}

absl::Status FileStorage::Import(const KeystoreContents& contents) {
  std::unique_lock<std::mutex> lock(mu_);
  if (absl::Status made = MakeDirectories(options_.data_dir, 0700); !made.ok()) {
    return made;
  }
  auto flock = FileLock::Acquire(lock_path_);
  if (!flock.ok()) return flock.status();
  auto existing = ReadFile(path_, kKeystoreHeaderBytes);
  if (existing.ok()) {
    return absl::AlreadyExistsError(absl::StrCat("keystore ", path_, " already exists"));
  }
  if (!absl::IsNotFound(existing.status())) return existing.status();
  KeystoreContents fresh;
  fresh.generation = 1;
  fresh.file = contents.file;
  auto written = Write(fresh);
  return written.status();
}

}  // namespace sealbox::server
