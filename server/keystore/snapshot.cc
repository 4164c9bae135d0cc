#include "server/keystore/snapshot.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/auth/tokens.h"
#include "server/keystore/names.h"
#include "server/keystore/record_enums.h"
#include "server/keystore/token_records.h"

namespace sealbox::server {
namespace {

// `old`: the key in the snapshot before, whose sealing epoch `epochs` may hand on.
absl::StatusOr<std::shared_ptr<const KeyEntry>> BuildKey(const std::string& tenant,
                                                         const internal::Key& key,
                                                         const KeyEntry* old,
                                                         crypto::Epochs& epochs) {
  auto entry = std::make_shared<KeyEntry>(KeyEntry::WithoutMaterial(tenant, key));
  for (const internal::KeyVersion& v : key.versions()) {
    if (v.state() != internal::DESTROYED) {
      entry->versions[v.version()].material =
          std::make_shared<const crypto::SecretBytes>(absl::MakeConstSpan(
              reinterpret_cast<const uint8_t*>(v.material().data()), v.material().size()));
    }
  }
  auto primary = entry->versions.find(entry->primary_version);
  if (primary == entry->versions.end() || primary->second.material == nullptr) {
    return absl::DataLossError(
        absl::StrCat(KeyRef(tenant, key.name()), " has no usable primary version"));
  }
  entry->sealing =
      epochs.ForSealing(crypto::KeyContext{tenant, key.name(), entry->primary_version},
                        primary->second.material, old == nullptr ? nullptr : old->sealing);
  return entry;
}

}  // namespace

absl::StatusOr<const KeyVersionEntry*> KeyEntry::VersionForOpen(uint32_t version) const {
  // Version 0 never exists (a damaged header): only real, trimmed versions say so.
  if (version >= 1 && version < min_available_version) {
    return absl::FailedPreconditionError(absl::StrCat("key \"", name, "\" version ", version,
                                                      " was trimmed (versions below ",
                                                      min_available_version, " no longer exist)"));
  }
  auto it = versions.find(version);
  if (it == versions.end()) {
    return absl::NotFoundError(absl::StrCat("key \"", name, "\" version ", version, " not found"));
  }
  if (version < min_decryption_version) {
    return absl::FailedPreconditionError(absl::StrCat("key \"", name, "\" version ", version,
                                                      " is below the minimum decryption version ",
                                                      min_decryption_version));
  }
  if (it->second.state != VersionState::kEnabled) {
    return absl::FailedPreconditionError(
        absl::StrCat("key \"", name, "\" version ", version, " is ",
                     it->second.state == VersionState::kDestroyed ? "destroyed" : "disabled"));
  }
  return &it->second;
}

KeyEntry KeyEntry::WithoutMaterial(const std::string& tenant, const internal::Key& key) {
  KeyEntry entry;
  entry.tenant = tenant;
  entry.name = key.name();
  entry.algorithm = FromRecord(key.algorithm());
  entry.primary_version = key.primary_version();
  entry.min_decryption_version = key.min_decryption_version();
  entry.min_available_version = std::max<uint32_t>(1, key.min_available_version());
  entry.rotation_period = absl::Seconds(key.rotation_period_seconds());
  entry.disabled = key.disabled();
  entry.exportable = key.exportable();
  for (const internal::KeyVersion& v : key.versions()) {
    if (v.version() == key.primary_version()) {
      entry.primary_create_time = absl::FromUnixSeconds(v.create_time_unix());
    }
    KeyVersionEntry& version = entry.versions[v.version()];
    version.version = v.version();
    version.state = FromRecord(v.state());
    version.imported = v.imported();
    version.create_time_unix = v.create_time_unix();
  }
  return entry;
}

KeyInfo KeyEntry::Info() const {
  KeyInfo key{*this, {}};
  for (const auto& [number, version] : versions) {
    key.versions.push_back(
        {number, version.state, absl::FromUnixSeconds(version.create_time_unix), version.imported});
  }
  return key;
}

TenantInfo TenantEntry::Info() const {
  TenantInfo tenant{name, tokens, {}};
  for (const auto& [key_name, key] : keys) tenant.keys.push_back(key_name);
  return tenant;
}

// Applies changes to a copy of a snapshot, copying a tenant (its map of key pointers)
// or the token index only the first time a change touches it.
class Snapshot::Editor {
 public:
  // Starts from `base`; keys' sealing epochs come from `epochs`, which may hand on
  // those of `previous` (may be null). `epochs` may be null only for no keys.
  Editor(const Snapshot& base, const Snapshot* previous, crypto::Epochs* epochs)
      : previous_(previous), epochs_(epochs), next_(new Snapshot(base)) {}

  absl::Status Apply(const RecordChange& change) {
    const RecordName& name = change.name;
    if (name.kind == RecordName::Kind::kTenant) {
      if (change.value.has_value()) {
        if (next_->tenants_.count(name.tenant) == 0) {
          auto tenant = std::make_shared<TenantEntry>();
          tenant->name = name.tenant;
          next_->tenants_[name.tenant] = tenant;
          mutable_tenants_[name.tenant] = tenant.get();
        }
      } else {
        auto it = next_->tenants_.find(name.tenant);
        if (it != next_->tenants_.end()) {
          for (const auto& [id, sha256] : it->second->token_sha256_by_id) {
            MutableTokenIndex().erase(sha256);
          }
          next_->tenants_.erase(it);
          mutable_tenants_.erase(name.tenant);
        }
      }
      return absl::OkStatus();
    }
    TenantEntry* tenant = MutableTenant(name.tenant);
    if (tenant == nullptr) return absl::OkStatus();  // an orphan: see With()
    if (name.kind == RecordName::Kind::kKey) {
      if (!change.value.has_value()) {
        tenant->keys.erase(name.name);
        return absl::OkStatus();
      }
      const KeyEntry* old =
          previous_ == nullptr ? nullptr : previous_->FindKey(name.tenant, name.name);
      auto key = BuildKey(name.tenant, change.value->key(), old, *epochs_);
      if (!key.ok()) return key.status();
      tenant->keys[name.name] = *std::move(key);
      return absl::OkStatus();
    }
    RemoveToken(*tenant, name.name);
    if (change.value.has_value()) {
      const internal::Token& token = change.value->token();
      TokenInfo info = TokenInfoOf(token);
      // A scope this server cannot read (a newer server's operation, an edit by
      // hand) fails closed: the token is listed, so it can be revoked, but it
      // authenticates nothing.
      absl::StatusOr<TokenAccess> access = TokenAccess::Create(info.scope);
      tenant->tokens.push_back(std::move(info));
      if (access.ok()) {
        auto grant = std::make_shared<TokenGrant>();
        grant->tenant = name.tenant;
        grant->id = token.id();
        grant->expire_time = StoredDeadline(token.expire_time_unix());
        grant->access = *std::move(access);
        grant->read_only = token.read_only();
        grant->retired = token.retired();
        tenant->token_sha256_by_id[token.id()] = token.sha256();
        MutableTokenIndex()[token.sha256()] = std::move(grant);
      }
    }
    return absl::OkStatus();
  }

  std::shared_ptr<const Snapshot> Finish(uint64_t generation) {
    next_->generation_ = generation;
    if (token_index_ != nullptr) next_->grant_by_token_sha256_ = std::move(token_index_);
    if (next_->grant_by_token_sha256_ == nullptr) {
      next_->grant_by_token_sha256_ = std::make_shared<const TokenIndex>();
    }
    return std::move(next_);
  }

 private:
  TenantEntry* MutableTenant(const std::string& name) {
    auto mutable_it = mutable_tenants_.find(name);
    if (mutable_it != mutable_tenants_.end()) return mutable_it->second;
    auto it = next_->tenants_.find(name);
    if (it == next_->tenants_.end()) return nullptr;
    auto copy = std::make_shared<TenantEntry>(*it->second);
    it->second = copy;
    mutable_tenants_[name] = copy.get();
    return copy.get();
  }

  TokenIndex& MutableTokenIndex() {
    if (token_index_ == nullptr) {
      token_index_ = next_->grant_by_token_sha256_ == nullptr
                         ? std::make_shared<TokenIndex>()
                         : std::make_shared<TokenIndex>(*next_->grant_by_token_sha256_);
    }
    return *token_index_;
  }

  void RemoveToken(TenantEntry& tenant, const std::string& id) {
    auto it = tenant.token_sha256_by_id.find(id);
    if (it != tenant.token_sha256_by_id.end()) {  // else listed but not in force
      MutableTokenIndex().erase(it->second);
      tenant.token_sha256_by_id.erase(it);
    }
    tenant.tokens.erase(std::remove_if(tenant.tokens.begin(), tenant.tokens.end(),
                                       [&](const TokenInfo& t) { return t.id == id; }),
                        tenant.tokens.end());
  }

  const Snapshot* previous_;
  crypto::Epochs* epochs_;
  std::shared_ptr<Snapshot> next_;
  // Tenants this edit made or copied, so it may change them in place.
  std::map<std::string, TenantEntry*, std::less<>> mutable_tenants_;
  std::shared_ptr<TokenIndex> token_index_;  // the copy, once a token changed
};

std::shared_ptr<const Snapshot> Snapshot::Empty() {
  return Editor(Snapshot(), nullptr, nullptr).Finish(0);
}

absl::StatusOr<std::shared_ptr<const Snapshot>> Snapshot::Build(const KeystoreContents& contents,
                                                                const Snapshot* previous,
                                                                crypto::Epochs& epochs) {
  Editor editor(Snapshot(), previous, &epochs);
  for (const RecordChange& record : RecordsOf(contents.file)) {
    if (absl::Status s = editor.Apply(record); !s.ok()) return s;
  }
  return editor.Finish(contents.generation);
}

absl::StatusOr<std::shared_ptr<const Snapshot>> Snapshot::With(
    const std::vector<RecordChange>& changes, uint64_t generation, crypto::Epochs& epochs) const {
  Editor editor(*this, this, &epochs);
  for (const RecordChange& change : changes) {
    if (absl::Status s = editor.Apply(change); !s.ok()) return s;
  }
  return editor.Finish(generation);
}

// A map keyed by the token's SHA-256 rather than a constant-time scan over every
// token: the lookup's timing can reveal at most how a hash of the presented token
// compares with the stored hashes, and learning a stored hash (even all of it) does
// not help find a token, whose 256 random bits a preimage search cannot reach. So the
// secret itself is never compared, and the hot path stays O(log n).
absl::StatusOr<std::shared_ptr<const TokenGrant>> Snapshot::TokenFor(
    absl::string_view token) const {
  return TokenForSha256(TokenSha256(token));
}

absl::StatusOr<std::shared_ptr<const TokenGrant>> Snapshot::TokenForSha256(
    absl::string_view sha256) const {
  auto it = grant_by_token_sha256_->find(sha256);
  if (it == grant_by_token_sha256_->end()) return absl::NotFoundError("unknown token");
  return it->second;
}

absl::StatusOr<std::string> Snapshot::TenantForToken(absl::string_view token) const {
  absl::StatusOr<std::shared_ptr<const TokenGrant>> grant = TokenFor(token);
  if (!grant.ok()) return grant.status();
  return (*grant)->tenant;
}

const KeyEntry* Snapshot::FindKey(absl::string_view tenant, absl::string_view name) const {
  const TenantEntry* entry = FindTenant(tenant);
  if (entry == nullptr) return nullptr;
  auto it = entry->keys.find(name);
  return it == entry->keys.end() ? nullptr : it->second.get();
}

const TenantEntry* Snapshot::FindTenant(absl::string_view name) const {
  auto it = tenants_.find(name);
  return it == tenants_.end() ? nullptr : it->second.get();
}

}  // namespace sealbox::server
