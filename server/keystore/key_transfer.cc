#include "server/keystore/key_transfer.h"

#include <openssl/rand.h>

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "crypto/secret/secret_bytes.h"
#include "server/custody/key_wrap.h"
#include "server/keystore/names.h"
#include "server/keystore/storage.h"

namespace sealbox::server {
namespace {

// The import keys a tenant keeps at most: a new one is made only when the newest is
// past half its life, so a few cover every sender in flight.
constexpr int kMaxImportKeys = 4;

std::string PemOf(const std::string& der) {
  const std::string base64 = absl::Base64Escape(der);
  std::string pem = "-----BEGIN PUBLIC KEY-----\n";
  for (size_t i = 0; i < base64.size(); i += 64) absl::StrAppend(&pem, base64.substr(i, 64), "\n");
  return pem + "-----END PUBLIC KEY-----\n";
}

ImportParameters ParametersOf(const internal::ImportKeyPair& pair) {
  return {pair.id(), pair.public_key_der(), PemOf(pair.public_key_der()),
          absl::FromUnixSeconds(pair.create_time_unix()),
          absl::FromUnixSeconds(pair.expire_time_unix())};
}

absl::StatusOr<std::string> NewImportKeyId() {
  uint8_t id[8];
  if (RAND_bytes(id, sizeof(id)) != 1) return absl::InternalError("RAND_bytes failed");
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(id), sizeof(id)));
}

}  // namespace

absl::StatusOr<ImportParameters> KeyTransfer::GetImportParameters(const std::string& tenant,
                                                                  absl::Duration ttl) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  if (ttl == absl::ZeroDuration()) ttl = kDefaultImportKeyTtl;
  if (ttl < absl::Seconds(1) || ttl > kMaxImportKeyTtl) {
    return absl::InvalidArgumentError("an import key's ttl is 1 s to 7 days (zero: 24 h)");
  }
  const int64_t now = NowUnix();
  // The newest pair, if it will do: no RSA key generation (a second or so) then.
  auto usable = [&](const internal::Tenant& record) -> const internal::ImportKeyPair* {
    const internal::ImportKeyPair* newest = nullptr;
    for (const internal::ImportKeyPair& pair : record.import_keys()) {
      if (newest == nullptr || pair.create_time_unix() > newest->create_time_unix()) {
        newest = &pair;
      }
    }
    // More than half of `ttl` to live, and no more than `ttl`: a caller asking for a
    // short-lived key does not get a long-lived one.
    const int64_t left = newest == nullptr ? 0 : newest->expire_time_unix() - now;
    const int64_t asked = absl::ToInt64Seconds(ttl);
    return left > asked / 2 && left <= asked ? newest : nullptr;
  };
  ImportParameters result;
  bool found = false;
  absl::Status s = keystore_.Update(RecordName::Tenant(tenant), [&](KeystoreTransaction& txn) {
    auto record = txn.RequireTenantRecord(tenant);
    if (!record.ok()) return record.status();
    if (const internal::ImportKeyPair* pair = usable(**record)) {
      result = ParametersOf(*pair);
      found = true;
    }
    return absl::OkStatus();
  });
  if (!s.ok() || found) {
    if (!s.ok()) return s;
    return result;
  }
  absl::StatusOr<custody::ImportKeyPair> generated = custody::ImportKeyPair::Generate(4096);
  if (!generated.ok()) return generated.status();
  absl::StatusOr<crypto::SecretBytes> private_der = generated->PrivateKeyDer();
  if (!private_der.ok()) return private_der.status();
  absl::StatusOr<std::string> id = NewImportKeyId();
  if (!id.ok()) return id.status();
  s = keystore_.Update(RecordName::Tenant(tenant), [&](KeystoreTransaction& txn) {
    auto record = txn.RequireTenantRecord(tenant);
    if (!record.ok()) return record.status();
    internal::Tenant& t = **record;
    // Another replica may have made one meanwhile: use it.
    if (const internal::ImportKeyPair* pair = usable(t)) {
      result = ParametersOf(*pair);
      return absl::OkStatus();
    }
    auto& pairs = *t.mutable_import_keys();
    for (int i = pairs.size() - 1; i >= 0; --i) {
      if (pairs[i].expire_time_unix() <= now) {
        WipeImportKey(pairs[i]);
        pairs.erase(pairs.begin() + i);
      }
    }
    while (pairs.size() >= kMaxImportKeys) {
      auto oldest = std::min_element(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
        return a.create_time_unix() < b.create_time_unix();
      });
      WipeImportKey(*oldest);
      pairs.erase(oldest);
    }
    internal::ImportKeyPair* pair = pairs.Add();
    pair->set_id(*id);
    pair->set_private_key_pkcs8(private_der->data(), private_der->size());
    pair->set_public_key_der(generated->PublicKeyDer());
    pair->set_create_time_unix(now);
    pair->set_expire_time_unix(now + absl::ToInt64Seconds(ttl));
    result = ParametersOf(*pair);
    txn.PutTenant(t);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return result;
}

absl::StatusOr<KeyInfo> KeyTransfer::ImportWrappedKey(const std::string& tenant,
                                                      const std::string& key,
                                                      const std::string& import_key_id,
                                                      absl::string_view wrapped,
                                                      const KeyAdmin::ImportOptions& options) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  if (absl::Status s = ValidateKeyName(key); !s.ok()) return s;
  crypto::SecretBytes private_der;
  absl::Status s = keystore_.Update(RecordName::Tenant(tenant), [&](KeystoreTransaction& txn) {
    auto record = txn.RequireTenantRecord(tenant);
    if (!record.ok()) return record.status();
    for (const internal::ImportKeyPair& pair : (*record)->import_keys()) {
      if (pair.id() != import_key_id) continue;
      if (pair.expire_time_unix() <= NowUnix()) {
        return absl::FailedPreconditionError(
            absl::StrCat("import key ", import_key_id, " of tenant ", tenant, " expired at ",
                         absl::FormatTime(absl::FromUnixSeconds(pair.expire_time_unix())),
                         "; fetch new import parameters and wrap the material again"));
      }
      const std::string& der = pair.private_key_pkcs8();
      private_der = crypto::SecretBytes(
          absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(der.data()), der.size()));
      return absl::OkStatus();
    }
    return absl::NotFoundError(absl::StrCat("tenant ", tenant, " has no import key '",
                                            import_key_id, "' (GetImportParameters)"));
  });
  if (!s.ok()) return s;
  absl::StatusOr<custody::ImportKeyPair> pair =
      custody::ImportKeyPair::FromPrivateKeyDer(private_der.span());
  if (!pair.ok()) return pair.status();
  absl::StatusOr<crypto::SecretBytes> material = custody::UnwrapKeyMaterial(*pair, wrapped);
  if (!material.ok()) return material.status();
  return keys_.ImportKey(tenant, key, material->span(), options);
}

absl::StatusOr<ExportedKey> KeyTransfer::ExportKey(const std::string& tenant,
                                                   const std::string& key,
                                                   absl::string_view public_key) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  if (absl::Status s = ValidateKeyName(key); !s.ok()) return s;
  ExportedKey result;
  absl::Status s = keystore_.Update(RecordName::Key(tenant, key), [&](KeystoreTransaction& txn) {
    auto k = txn.RequireKey(tenant, key);
    if (!k.ok()) return k.status();
    if (!(*k)->exportable()) {
      return absl::FailedPreconditionError(
          absl::StrCat(KeyRef(tenant, key),
                       " is not exportable: it was created without exportable, which cannot be "
                       "changed; its material never leaves this keystore"));
    }
    result.key = KeyEntry::WithoutMaterial(tenant, **k).Info();
    for (const internal::KeyVersion& version : (*k)->versions()) {
      if (version.material().empty()) continue;  // destroyed
      absl::StatusOr<std::string> wrapped = custody::WrapKeyMaterial(
          public_key,
          absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(version.material().data()),
                              version.material().size()));
      if (!wrapped.ok()) return wrapped.status();
      result.versions.push_back({version.version(), *std::move(wrapped)});
    }
    std::sort(
        result.versions.begin(), result.versions.end(),
        [](const ExportedVersion& a, const ExportedVersion& b) { return a.version < b.version; });
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return result;
}

}  // namespace sealbox::server
