#include "server/keystore/snapshot.h"

#include <openssl/crypto.h>

#include "absl/strings/str_cat.h"
#include "server/keystore/tokens.h"

namespace sealbox::server {
namespace {

bool SameBytes(const crypto::SecretBytes& a, const crypto::SecretBytes& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// The previous snapshot's sealing epoch for `key`, if it is still the right one.
std::shared_ptr<SealingEpoch> ReusableEpoch(const KeyEntry& key,
                                            const Snapshot* previous) {
  const KeyEntry* old =
      previous == nullptr ? nullptr : previous->FindKey(key.tenant, key.name);
  if (old == nullptr || old->sealing == nullptr ||
      old->primary_version != key.primary_version) {
    return nullptr;
  }
  // A tenant deleted and created again has a version 1 with other material.
  const auto& now = key.versions.at(key.primary_version).material;
  if (now == nullptr || !SameBytes(old->sealing->material(), *now)) return nullptr;
  return old->sealing;
}

absl::StatusOr<KeyEntry> BuildKey(const std::string& tenant, const internal::Key& key,
                                  const Snapshot* previous) {
  KeyEntry entry;
  entry.tenant = tenant;
  entry.name = key.name();
  entry.algorithm = key.algorithm();
  entry.primary_version = key.primary_version();
  entry.min_decryption_version = key.min_decryption_version();
  for (const internal::KeyVersion& v : key.versions()) {
    KeyVersionEntry& version = entry.versions[v.version()];
    version.version = v.version();
    version.state = v.state();
    version.imported = v.imported();
    version.create_time_unix = v.create_time_unix();
    if (v.state() != v1::DESTROYED) {
      version.material = std::make_shared<const crypto::SecretBytes>(absl::MakeConstSpan(
          reinterpret_cast<const uint8_t*>(v.material().data()), v.material().size()));
    }
  }
  auto primary = entry.versions.find(entry.primary_version);
  if (primary == entry.versions.end() || primary->second.material == nullptr) {
    return absl::DataLossError(
        absl::StrCat("key ", tenant, "/", key.name(), " has no usable primary version"));
  }
  entry.sealing = ReusableEpoch(entry, previous);
  if (entry.sealing == nullptr) {
    entry.sealing = std::make_shared<SealingEpoch>(
        primary->second.material,
        crypto::KeyContext{tenant, key.name(), entry.primary_version});
  }
  return entry;
}

}  // namespace

absl::StatusOr<const KeyVersionEntry*> KeyEntry::VersionForOpen(uint32_t version) const {
  auto it = versions.find(version);
  if (it == versions.end()) {
    return absl::NotFoundError(absl::StrCat("key ", name, " has no version ", version));
  }
  if (version < min_decryption_version) {
    return absl::FailedPreconditionError(absl::StrCat(
        "key ", name, " version ", version, " is below the minimum decryption version ",
        min_decryption_version));
  }
  if (it->second.state != v1::ENABLED) {
    return absl::FailedPreconditionError(
        absl::StrCat("key ", name, " version ", version, " is ",
                     it->second.state == v1::DESTROYED ? "destroyed" : "disabled"));
  }
  return &it->second;
}

v1::Key KeyEntry::ToProto() const {
  v1::Key key;
  key.set_tenant(tenant);
  key.set_name(name);
  key.set_algorithm(algorithm);
  key.set_primary_version(primary_version);
  key.set_min_decryption_version(min_decryption_version);
  for (const auto& [number, version] : versions) {
    v1::KeyVersion* out = key.add_versions();
    out->set_version(number);
    out->set_state(version.state);
    out->set_create_time_unix(version.create_time_unix);
    out->set_imported(version.imported);
  }
  return key;
}

v1::Tenant TenantEntry::ToProto() const {
  v1::Tenant tenant;
  tenant.set_name(name);
  for (const v1::TokenInfo& token : tokens) *tenant.add_tokens() = token;
  for (const auto& [key_name, key] : keys) tenant.add_keys(key_name);
  return tenant;
}

absl::StatusOr<std::shared_ptr<const Snapshot>> Snapshot::Build(
    const KeystoreContents& contents, const Snapshot* previous) {
  std::shared_ptr<Snapshot> snapshot(new Snapshot());
  snapshot->generation_ = contents.generation;
  for (const internal::Tenant& t : contents.file.tenants()) {
    TenantEntry& tenant = snapshot->tenants_[t.name()];
    tenant.name = t.name();
    for (const internal::Token& token : t.tokens()) {
      v1::TokenInfo& info = tenant.tokens.emplace_back();
      info.set_id(token.id());
      info.set_description(token.description());
      info.set_create_time_unix(token.create_time_unix());
      snapshot->tenant_by_token_sha256_[token.sha256()] = t.name();
    }
    for (const internal::Key& k : t.keys()) {
      auto key = BuildKey(t.name(), k, previous);
      if (!key.ok()) return key.status();
      tenant.keys.emplace(k.name(), *std::move(key));
    }
  }
  return snapshot;
}

// A map keyed by the token's SHA-256 rather than a constant-time scan over every
// token: the lookup's timing can reveal at most how a hash of the presented token
// compares with the stored hashes, and learning a stored hash (even all of it) does
// not help find a token, whose 256 random bits a preimage search cannot reach. So the
// secret itself is never compared, and the hot path stays O(log n).
absl::StatusOr<std::string> Snapshot::TenantForToken(absl::string_view token) const {
  auto it = tenant_by_token_sha256_.find(TokenSha256(token));
  if (it == tenant_by_token_sha256_.end()) return absl::NotFoundError("unknown token");
  return it->second;
}

const KeyEntry* Snapshot::FindKey(absl::string_view tenant,
                                  absl::string_view name) const {
  const TenantEntry* entry = FindTenant(tenant);
  if (entry == nullptr) return nullptr;
  auto it = entry->keys.find(name);
  return it == entry->keys.end() ? nullptr : &it->second;
}

const TenantEntry* Snapshot::FindTenant(absl::string_view name) const {
  auto it = tenants_.find(name);
  return it == tenants_.end() ? nullptr : &it->second;
}

}  // namespace sealbox::server
