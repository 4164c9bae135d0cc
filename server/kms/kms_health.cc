#include "server/kms/kms_health.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/keystore/names.h"
#include "server/kms/key_id.h"
#include "server/rpc/bytes.h"

namespace sealbox::server {
namespace {

// What the round trip seals: the size of kube-apiserver's seeds. Not secret.
constexpr char kProbe[] = "sealbox kms v2 status round trip";
static_assert(sizeof(kProbe) - 1 == 32);
// Bound into the probe's ciphertext, so it can never be mistaken for a seed's.
constexpr char kProbeContext[] = "sealbox kms v2 status";

}  // namespace

KmsHealth::KmsHealth(Keystore& keystore, DataPlaneEngine& engine, KmsKey key,
                     absl::Duration round_trip_ttl)
    : keystore_(keystore), engine_(engine), key_(std::move(key)), round_trip_ttl_(round_trip_ttl) {}

KmsHealth::Answer KmsHealth::Check() {
  const std::string ref = KeyRef(key_.tenant, key_.key);
  if (absl::Status serving = keystore_.Serving(); !serving.ok()) {
    return {absl::StrCat("sealbox cannot serve ", ref, ": ", serving.message()), ""};
  }
  std::shared_ptr<const Snapshot> snapshot = keystore_.snapshot();
  const KeyEntry* key = snapshot->FindKey(key_.tenant, key_.key);
  if (key == nullptr) {
    return {absl::StrCat(ref,
                         " does not exist in sealbox's keystore (create it, or fix "
                         "--kms-key)"),
            ""};
  }
  if (key->disabled) {
    return {absl::StrCat(ref,
                         " is disabled in sealbox: nothing seals or opens with it (enable it: "
                         "sealbox admin key enable-key ",
                         key_.tenant, " ", key_.key, ")"),
            ""};
  }
  auto primary = key->versions.find(key->primary_version);
  if (primary == key->versions.end() || primary->second.state != VersionState::kEnabled) {
    return {absl::StrCat("the primary version ", key->primary_version, " of ", ref,
                         " is not enabled (enable it, or rotate the key)"),
            ""};
  }
  absl::StatusOr<std::string> key_id = KmsKeyId(*key, primary->second);
  if (!key_id.ok()) return {std::string(key_id.status().message()), ""};
  {
    absl::MutexLock lock(&mu_);
    if (proven_key_id_ == *key_id && absl::Now() - proven_at_ < round_trip_ttl_) {
      return {"ok", *key_id};
    }
  }
  if (absl::Status proven = RoundTrip(snapshot); !proven.ok()) {
    return {absl::StrCat("an encrypt and decrypt round trip under ", ref, " version ",
                         key->primary_version, " failed: ", proven.message()),
            *key_id};
  }
  absl::MutexLock lock(&mu_);
  proven_key_id_ = *key_id;
  proven_at_ = absl::Now();
  return {"ok", *key_id};
}

absl::Status KmsHealth::RoundTrip(std::shared_ptr<const Snapshot> snapshot) {
  // The probe works on the snapshot it checked, and never waits for the store.
  CallSnapshot view(std::move(snapshot));
  const CallKey key{view, key_.tenant, key_.key};
  std::string ciphertext;
  absl::StatusOr<uint32_t> sealed =
      engine_.Seal(key, AsBytes(kProbe), AsBytes(kProbeContext), ciphertext);
  if (!sealed.ok()) return sealed.status();
  std::string opened;
  absl::StatusOr<uint32_t> version =
      engine_.Open(key, AsBytes(ciphertext), AsBytes(kProbeContext), opened);
  if (!version.ok()) return version.status();
  if (opened != kProbe || *version != *sealed) {
    return absl::InternalError("what was opened is not what was sealed");
  }
  return absl::OkStatus();
}

}  // namespace sealbox::server
