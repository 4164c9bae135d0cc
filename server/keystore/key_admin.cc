#include "server/keystore/key_admin.h"

#include <openssl/rand.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "crypto/secret/secret_bytes.h"
#include "server/keystore/names.h"
#include "server/keystore/record_enums.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

absl::Status ValidateRef(const std::string& tenant, const std::string& key) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  return ValidateKeyName(key);
}

size_t MaterialBytes(internal::Algorithm algorithm) {
  switch (algorithm) {
    case internal::AES_128_GCM:
      return 16;
    case internal::AES_256_GCM:
      return 32;
    default:
      return 0;
  }
}

absl::StatusOr<crypto::SecretBytes> RandomMaterial(internal::Algorithm algorithm) {
  crypto::SecretBytes material(MaterialBytes(algorithm));
  if (material.empty() || RAND_bytes(material.data(), material.size()) != 1) {
    return absl::InternalError("generating key material failed");
  }
  return material;
}

// Every error names what it is about in one form (TenantRef, KeyRef; `key
// "acme/orders" version 3`). Names are validated before any lookup, so the ones quoted

absl::StatusOr<internal::KeyVersion*> FindVersion(const std::string& tenant, internal::Key& key,
                                                  uint32_t version) {
  for (internal::KeyVersion& v : *key.mutable_versions()) {
    if (v.version() == version) return &v;
  }
  return absl::NotFoundError(
      absl::StrCat(KeyRef(tenant, key.name()), " version ", version, " not found"));
}

// One past the highest version so far.
uint32_t NextVersion(const internal::Key& key) {
  uint32_t next = 1;
  for (const internal::KeyVersion& v : key.versions()) next = std::max(next, v.version() + 1);
  return next;
}

// Appends a version (one past the highest so far) and makes it primary.
void AddPrimaryVersion(internal::Key& key, absl::Span<const uint8_t> material, bool imported) {
  const uint32_t next = NextVersion(key);
  internal::KeyVersion* version = key.add_versions();
  version->set_version(next);
  version->set_state(internal::ENABLED);
  version->set_material(material.data(), material.size());
  version->set_imported(imported);
  version->set_create_time_unix(NowUnix());
  key.set_primary_version(next);
  if (key.min_decryption_version() == 0) key.set_min_decryption_version(1);
}

absl::Status RotateFirst(const std::string& tenant, const internal::Key& key, uint32_t version) {
  return absl::FailedPreconditionError(absl::StrCat(
      KeyRef(tenant, key.name()), " version ", version, " is the primary version; rotate first"));
}

// What admin calls say of a key as committed (no key material).
KeyInfo InfoOf(const std::string& tenant, const internal::Key& key) {
  return KeyEntry::WithoutMaterial(tenant, key).Info();
}

}  // namespace

absl::StatusOr<KeyInfo> KeyAdmin::UpdateKey(
    const std::string& tenant, const std::string& key,
    const std::function<absl::StatusOr<bool>(internal::Key&)>& change) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  KeyInfo result;
  absl::Status s = keystore_.Update(RecordName::Key(tenant, key), [&](KeystoreTransaction& txn) {
    auto k = txn.RequireKey(tenant, key);
    if (!k.ok()) return k.status();
    absl::StatusOr<bool> changed = change(**k);
    if (!changed.ok()) return changed.status();
    if (*changed) txn.PutKey(tenant, **k);
    result = InfoOf(tenant, **k);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return result;
}

absl::StatusOr<KeyInfo> KeyAdmin::CreateKey(const std::string& tenant, const std::string& key,
                                            KeyAlgorithm requested, bool exportable) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  internal::Algorithm algorithm = ToRecord(requested);
  if (algorithm == internal::ALGORITHM_UNSPECIFIED) algorithm = internal::AES_256_GCM;
  if (MaterialBytes(algorithm) == 0) {
    return absl::InvalidArgumentError("algorithm must be AES_128_GCM or AES_256_GCM");
  }
  auto material = RandomMaterial(algorithm);
  if (!material.ok()) return material.status();
  KeyInfo result;
  absl::Status s = keystore_.Update(RecordName::Key(tenant, key), [&](KeystoreTransaction& txn) {
    if (absl::Status s = txn.RequireTenant(tenant); !s.ok()) return s;
    auto existing = txn.FindKey(tenant, key);
    if (!existing.ok()) return existing.status();
    if (*existing != nullptr) {
      return absl::AlreadyExistsError(absl::StrCat(KeyRef(tenant, key), " already exists"));
    }
    internal::Record record;
    internal::Key& created = *record.mutable_key();
    created.set_name(key);
    created.set_algorithm(algorithm);
    created.set_exportable(exportable);
    AddPrimaryVersion(created, material->span(), /*imported=*/false);
    txn.PutKey(tenant, created);
    result = InfoOf(tenant, created);
    WipeRecord(record);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return result;
}

absl::StatusOr<KeyInfo> KeyAdmin::ImportKey(const std::string& tenant, const std::string& key,
                                            absl::Span<const uint8_t> material,
                                            const ImportOptions& options) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  const internal::Algorithm algorithm = material.size() == 16   ? internal::AES_128_GCM
                                        : material.size() == 32 ? internal::AES_256_GCM
                                                                : internal::ALGORITHM_UNSPECIFIED;
  if (algorithm == internal::ALGORITHM_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("key material must be 16 or 32 bytes, not ", material.size()));
  }
  // All zeros (an unset buffer) and other one-byte fills are mistakes, not keys. The
  // message says nothing of which byte it was.
  if (std::all_of(material.begin(), material.end(), [&](uint8_t b) { return b == material[0]; })) {
    return absl::InvalidArgumentError(
        "key material is one byte repeated (such as all zeros); import random bytes");
  }
  KeyInfo result;
  absl::Status s = keystore_.Update(RecordName::Key(tenant, key), [&](KeystoreTransaction& txn) {
    if (absl::Status s = txn.RequireTenant(tenant); !s.ok()) return s;
    auto existing = txn.FindKey(tenant, key);
    if (!existing.ok()) return existing.status();
    internal::Record record;
    internal::Key& imported = *record.mutable_key();
    if (*existing != nullptr) {
      if ((*existing)->algorithm() != algorithm) {
        return absl::InvalidArgumentError(absl::StrCat(
            KeyRef(tenant, key), " is ", internal::Algorithm_Name((*existing)->algorithm()), " (",
            MaterialBytes((*existing)->algorithm()), "-byte material), not ", material.size(),
            " bytes"));
      }
      imported = **existing;
    } else {
      imported.set_name(key);
      imported.set_algorithm(algorithm);
      imported.set_exportable(options.exportable);
    }
    const uint32_t next = NextVersion(imported);
    if (options.version != 0 && options.version != next) {
      return absl::FailedPreconditionError(absl::StrCat(
          KeyRef(tenant, key), "'s next version is ", next, ", not ", options.version,
          ": import an export's versions in order, into a key that has none of its own"));
    }
    AddPrimaryVersion(imported, material, /*imported=*/true);
    txn.PutKey(tenant, imported);
    result = InfoOf(tenant, imported);
    WipeRecord(record);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return result;
}

absl::StatusOr<KeyInfo> KeyAdmin::RotateKey(const std::string& tenant, const std::string& key) {
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    auto material = RandomMaterial(k.algorithm());
    if (!material.ok()) return material.status();
    AddPrimaryVersion(k, material->span(), /*imported=*/false);
    return true;
  });
}

absl::StatusOr<KeyInfo> KeyAdmin::SetRotationPeriod(const std::string& tenant,
                                                    const std::string& key, absl::Duration period) {
  const absl::Duration min = keystore_.min_rotation_period();
  if (period != absl::ZeroDuration() && (period < min || period > absl::Hours(24 * 36525))) {
    return absl::InvalidArgumentError(
        absl::StrCat("a rotation period must be zero (never) or between ",
                     absl::FormatDuration(min), " (--min-rotation-period-seconds) and 100 years"));
  }
  const int64_t seconds = absl::ToInt64Seconds(period);
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    if (k.rotation_period_seconds() == seconds) return false;
    k.set_rotation_period_seconds(seconds);
    return true;
  });
}

namespace {

// When `key`'s next automatic rotation is due, or InfiniteFuture.
absl::Time RotationDue(const internal::Key& key) {
  if (key.rotation_period_seconds() <= 0) return absl::InfiniteFuture();
  for (const internal::KeyVersion& v : key.versions()) {
    if (v.version() == key.primary_version()) {
      return absl::FromUnixSeconds(v.create_time_unix() + key.rotation_period_seconds());
    }
  }
  return absl::InfiniteFuture();
}

}  // namespace

std::vector<std::string> KeyAdmin::RotateDueKeys(absl::Time now) {
  std::vector<std::pair<std::string, std::string>> due;
  for (const auto& [tenant_name, tenant] : keystore_.snapshot()->tenants()) {
    for (const auto& [key_name, key] : tenant->keys) {
      if (!key->disabled && key->rotation_period > absl::ZeroDuration() &&
          key->primary_create_time + key->rotation_period <= now) {
        due.emplace_back(tenant_name, key_name);
      }
    }
  }
  std::vector<std::string> rotated;
  for (const auto& [tenant, key] : due) {
    bool rotated_here = false;
    absl::StatusOr<KeyInfo> info =
        UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
          rotated_here = false;
          // Read in the transaction: another replica may have rotated it already.
          if (k.disabled() || RotationDue(k) > now) return false;
          auto material = RandomMaterial(k.algorithm());
          if (!material.ok()) return material.status();
          AddPrimaryVersion(k, material->span(), /*imported=*/false);
          rotated_here = true;
          return true;
        });
    if (!info.ok()) {
      // Retried at the next check; a conflict that outlasted the retries means
      // another replica is changing this key right now.
      Log("auto_rotation_failed", absl::IsAborted(info.status()) ? "info" : "warning")
          .Add("tenant", tenant)
          .Add("key", key)
          .Add("detail", info.status().ToString());
      continue;
    }
    if (rotated_here) {
      Log("key_rotated", "info")
          .Add("tenant", tenant)
          .Add("key", key)
          .Add("version", static_cast<int64_t>(info->primary_version))
          .Add("reason", "rotation_period");
      rotated.push_back(absl::StrCat(tenant, "/", key));
    }
  }
  return rotated;
}

absl::Duration KeyAdmin::RotationCheckInterval() const {
  return std::clamp(keystore_.min_rotation_period() / 10, absl::Milliseconds(100),
                    absl::Minutes(1));
}

absl::StatusOr<KeyInfo> KeyAdmin::GetKey(const std::string& tenant, const std::string& key) const {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  auto snap = keystore_.snapshot();
  if (snap->FindTenant(tenant) == nullptr) return TenantNotFound(tenant);
  const KeyEntry* entry = snap->FindKey(tenant, key);
  if (entry == nullptr) return KeyNotFound(tenant, key);
  return entry->Info();
}

absl::StatusOr<std::vector<KeyInfo>> KeyAdmin::ListKeys(const std::string& tenant) const {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  auto snap = keystore_.snapshot();
  const TenantEntry* entry = snap->FindTenant(tenant);
  if (entry == nullptr) return TenantNotFound(tenant);
  std::vector<KeyInfo> out;
  for (const auto& [name, key] : entry->keys) out.push_back(key->Info());
  return out;
}

absl::StatusOr<KeyInfo> KeyAdmin::SetMinDecryptionVersion(const std::string& tenant,
                                                          const std::string& key,
                                                          uint32_t version) {
  if (version == 0) {
    if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
    return absl::InvalidArgumentError("the minimum decryption version must be >= 1");
  }
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    if (version < k.min_available_version()) {
      return absl::FailedPreconditionError(
          absl::StrCat(KeyRef(tenant, key), " versions below ", k.min_available_version(),
                       " were trimmed; the minimum decryption version cannot go below it"));
    }
    if (version > k.primary_version()) {
      return absl::FailedPreconditionError(absl::StrCat(
          KeyRef(tenant, key), " minimum decryption version ", version,
          " would be above its primary version ", k.primary_version(), "; rotate first"));
    }
    k.set_min_decryption_version(version);
    return true;
  });
}

absl::StatusOr<KeyInfo> KeyAdmin::SetKeyEnabled(const std::string& tenant, const std::string& key,
                                                bool enabled) {
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    if (k.disabled() == !enabled) return false;
    k.set_disabled(!enabled);
    return true;
  });
}

absl::StatusOr<KeyInfo> KeyAdmin::SetVersionState(const std::string& tenant, const std::string& key,
                                                  uint32_t version, VersionState requested) {
  const internal::KeyVersionState state = ToRecord(requested);
  if (state != internal::ENABLED && state != internal::DISABLED) {
    if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
    return absl::InvalidArgumentError("a version can only be set ENABLED or DISABLED");
  }
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    auto v = FindVersion(tenant, k, version);
    if (!v.ok()) return v.status();
    if ((*v)->state() == internal::DESTROYED) {
      return absl::FailedPreconditionError(
          absl::StrCat(KeyRef(tenant, key), " version ", version, " is destroyed"));
    }
    if (state == internal::DISABLED && version == k.primary_version()) {
      return RotateFirst(tenant, k, version);
    }
    if ((*v)->state() == state) return false;
    (*v)->set_state(state);
    return true;
  });
}

absl::StatusOr<KeyInfo> KeyAdmin::TrimKey(const std::string& tenant, const std::string& key,
                                          uint32_t min_available_version) {
  if (min_available_version == 0) {
    if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
    return absl::InvalidArgumentError("the minimum available version must be >= 1");
  }
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    if (min_available_version > k.min_decryption_version()) {
      return absl::FailedPreconditionError(
          absl::StrCat(KeyRef(tenant, key), " versions from ", k.min_decryption_version(),
                       " still open; trimming below ", min_available_version,
                       " needs the minimum decryption version raised to it first"));
    }
    if (min_available_version <= std::max<uint32_t>(1, k.min_available_version())) {
      return false;  // already trimmed that far: nothing to write
    }
    // Kept versions move to the front by swapping pointers (no copy of their
    // material is left behind); the trimmed ones, wiped, are deleted from the end.
    auto* versions = k.mutable_versions();
    int kept = 0;
    for (int i = 0; i < versions->size(); ++i) {
      if (versions->Get(i).version() < min_available_version) {
        WipeMaterial(*versions->Mutable(i));
      } else {
        versions->SwapElements(i, kept++);
      }
    }
    versions->DeleteSubrange(kept, versions->size() - kept);
    k.set_min_available_version(min_available_version);
    return true;
  });
}

absl::StatusOr<KeyInfo> KeyAdmin::DestroyVersion(const std::string& tenant, const std::string& key,
                                                 uint32_t version) {
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    auto v = FindVersion(tenant, k, version);
    if (!v.ok()) return v.status();
    if ((*v)->state() == internal::DESTROYED) return false;  // idempotent: nothing to write
    if (version == k.primary_version()) return RotateFirst(tenant, k, version);
    WipeMaterial(**v);
    (*v)->set_state(internal::DESTROYED);
    return true;
  });
}

}  // namespace sealbox::server
