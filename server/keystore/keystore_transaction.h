// What the keystore's admin rooms (tenant_admin.h, key_admin.h, token_admin.h) write
// with: a transaction of typed reads and buffered writes over the store, and the
// writer (the Keystore) that runs one until it commits.
#ifndef SEALBOX_SERVER_KEYSTORE_KEYSTORE_TRANSACTION_H_
#define SEALBOX_SERVER_KEYSTORE_KEYSTORE_TRANSACTION_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/sealbox/internal/keystore_record.pb.h"
#include "server/keystore/snapshot.h"
#include "server/keystore/storage.h"

namespace sealbox::server {

// Every error names what it is about in one form (TenantRef, KeyRef). Names are
// validated before any lookup, so the ones quoted are plain [A-Za-z0-9_.-] text.
absl::Status TenantNotFound(const std::string& tenant);
absl::Status KeyNotFound(const std::string& tenant, const std::string& key);

// Seconds since the epoch, as records keep times.
int64_t NowUnix();

// Typed reads and buffered writes over one StorageTransaction. Records it reads are
// its own copies, wiped when it goes away.
class KeystoreTransaction {
 public:
  explicit KeystoreTransaction(StorageTransaction& storage) : storage_(storage) {}
  ~KeystoreTransaction() {
    for (internal::Record& record : reads_) WipeRecord(record);
  }

  absl::StatusOr<bool> HasTenant(const std::string& tenant) {
    auto record = storage_.Read(RecordName::Tenant(tenant));
    if (!record.ok()) return record.status();
    return record->has_value();
  }

  // The tenant's own record (its name and import keys), or NOT_FOUND. The
  // transaction owns it: change it in place, then PutTenant it.
  absl::StatusOr<internal::Tenant*> RequireTenantRecord(const std::string& tenant) {
    auto record = storage_.Read(RecordName::Tenant(tenant));
    if (!record.ok()) return record.status();
    if (!record->has_value()) return TenantNotFound(tenant);
    reads_.push_back(**std::move(record));
    return reads_.back().mutable_tenant();
  }

  // OK when the tenant exists, else NOT_FOUND.
  absl::Status RequireTenant(const std::string& tenant) {
    auto exists = HasTenant(tenant);
    if (!exists.ok()) return exists.status();
    return *exists ? absl::OkStatus() : TenantNotFound(tenant);
  }

  // The key as stored, or nullptr when there is none. The transaction owns it: change
  // it in place, then Put it.
  absl::StatusOr<internal::Key*> FindKey(const std::string& tenant, const std::string& key) {
    auto record = storage_.Read(RecordName::Key(tenant, key));
    if (!record.ok()) return record.status();
    if (!record->has_value()) return nullptr;
    reads_.push_back(**std::move(record));
    return reads_.back().mutable_key();
  }

  // The key, or NOT_FOUND naming what is missing (its tenant, or the key). A key
  // that exists needs no read of its tenant: deleting a tenant deletes its keys in
  // the same commit, so the key's own read condition covers both.
  absl::StatusOr<internal::Key*> RequireKey(const std::string& tenant, const std::string& key) {
    auto found = FindKey(tenant, key);
    if (!found.ok()) return found.status();
    if (*found != nullptr) return *found;
    if (absl::Status s = RequireTenant(tenant); !s.ok()) return s;
    return KeyNotFound(tenant, key);
  }

  absl::StatusOr<bool> HasToken(const std::string& tenant, const std::string& id) {
    auto token = FindToken(tenant, id);
    if (!token.ok()) return token.status();
    return *token != nullptr;
  }

  // The token as stored, or nullptr when there is none.
  absl::StatusOr<const internal::Token*> FindToken(const std::string& tenant,
                                                   const std::string& id) {
    auto record = storage_.Read(RecordName::Token(tenant, id));
    if (!record.ok()) return record.status();
    if (!record->has_value()) return nullptr;
    reads_.push_back(**std::move(record));
    return &reads_.back().token();
  }

  void PutTenant(const std::string& tenant) {
    internal::Record record;
    record.mutable_tenant()->set_name(tenant);
    changes_.emplace_back(RecordName::Tenant(tenant), std::move(record));
  }
  void PutTenant(const internal::Tenant& tenant) {
    internal::Record record;
    *record.mutable_tenant() = tenant;
    changes_.emplace_back(RecordName::Tenant(tenant.name()), std::move(record));
  }
  void PutKey(const std::string& tenant, const internal::Key& key) {
    internal::Record record;
    *record.mutable_key() = key;
    changes_.emplace_back(RecordName::Key(tenant, key.name()), std::move(record));
  }
  void PutToken(const std::string& tenant, const internal::Token& token) {
    internal::Record record;
    *record.mutable_token() = token;
    changes_.emplace_back(RecordName::Token(tenant, token.id()), std::move(record));
  }
  void Delete(RecordName name) { changes_.emplace_back(std::move(name), std::nullopt); }

  std::vector<RecordChange> TakeChanges() { return std::move(changes_); }

 private:
  StorageTransaction& storage_;
  std::deque<internal::Record> reads_;
  std::vector<RecordChange> changes_;
};

// The keystore as its admin rooms see it.
class KeystoreWriter {
 public:
  virtual ~KeystoreWriter() = default;

  // The current snapshot: what reads answer from.
  virtual std::shared_ptr<const Snapshot> snapshot() const = 0;
  // Runs `change` in transactions until one commits (another writer's commit in
  // between makes it run again on a fresh read, a bounded number of times, then
  // ABORTED), and returns once the commit is in this keystore's snapshot. `lock`
  // names the record it changes, so writers of one record in this process take turns
  // instead of racing each other through the store. UNAVAILABLE while the store
  // cannot be reached.
  virtual absl::Status Update(const RecordName& lock,
                              const std::function<absl::Status(KeystoreTransaction&)>& change) = 0;
  // The shortest rotation period a key may have (KeystoreOpenOptions).
  virtual absl::Duration min_rotation_period() const = 0;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_KEYSTORE_TRANSACTION_H_
