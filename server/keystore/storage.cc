#include "server/keystore/storage.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sealbox::server {

RecordName RecordName::Tenant(std::string tenant) { return {Kind::kTenant, std::move(tenant), ""}; }

RecordName RecordName::Key(std::string tenant, std::string key) {
  return {Kind::kKey, std::move(tenant), std::move(key)};
}

RecordName RecordName::Token(std::string tenant, std::string id) {
  return {Kind::kToken, std::move(tenant), std::move(id)};
}

std::string RecordName::ToString() const {
  switch (kind) {
    case Kind::kTenant:
      return absl::StrCat("tenant ", tenant);
    case Kind::kKey:
      return absl::StrCat("key ", tenant, "/", name);
    case Kind::kToken:
      return absl::StrCat("token ", tenant, "/", name);
  }
  return "record";
}

RecordChange::~RecordChange() {
  if (value.has_value()) WipeRecord(*value);
}

void WipeRecord(internal::Record& record) {
  if (record.has_tenant()) {
    for (internal::ImportKeyPair& pair : *record.mutable_tenant()->mutable_import_keys()) {
      WipeImportKey(pair);
    }
  }
  if (!record.has_key()) return;
  for (internal::KeyVersion& version : *record.mutable_key()->mutable_versions()) {
    WipeMaterial(version);
  }
}

absl::StatusOr<RecordName> NameOf(const std::string& tenant, const internal::Record& record) {
  switch (record.value_case()) {
    case internal::Record::kTenant:
      return RecordName::Tenant(record.tenant().name());
    case internal::Record::kKey:
      return RecordName::Key(tenant, record.key().name());
    case internal::Record::kToken:
      return RecordName::Token(tenant, record.token().id());
    default:
      return absl::InvalidArgumentError("not a tenant, key or token record");
  }
}

std::vector<RecordChange> RecordsOf(const internal::KeystoreFile& file) {
  std::vector<RecordChange> records;
  for (const internal::Tenant& tenant : file.tenants()) {
    internal::Record record;
    record.mutable_tenant()->set_name(tenant.name());
    *record.mutable_tenant()->mutable_import_keys() = tenant.import_keys();
    records.emplace_back(RecordName::Tenant(tenant.name()), std::move(record));
    for (const internal::Key& key : tenant.keys()) {
      internal::Record k;
      *k.mutable_key() = key;
      records.emplace_back(RecordName::Key(tenant.name(), key.name()), std::move(k));
    }
    for (const internal::Token& token : tenant.tokens()) {
      internal::Record t;
      *t.mutable_token() = token;
      records.emplace_back(RecordName::Token(tenant.name(), token.id()), std::move(t));
    }
  }
  return records;
}

namespace {

template <typename Repeated, typename Less>
void SortRepeated(Repeated& items, Less less) {
  std::sort(items.begin(), items.end(), less);
}

}  // namespace

void SortKeystore(internal::KeystoreFile& file) {
  SortRepeated(*file.mutable_tenants(),
               [](const auto& a, const auto& b) { return a.name() < b.name(); });
  for (internal::Tenant& tenant : *file.mutable_tenants()) {
    SortRepeated(*tenant.mutable_keys(),
                 [](const auto& a, const auto& b) { return a.name() < b.name(); });
    SortRepeated(*tenant.mutable_tokens(),
                 [](const auto& a, const auto& b) { return a.id() < b.id(); });
    for (internal::Key& key : *tenant.mutable_keys()) {
      SortRepeated(*key.mutable_versions(),
                   [](const auto& a, const auto& b) { return a.version() < b.version(); });
    }
  }
}

}  // namespace sealbox::server
