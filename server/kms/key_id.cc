#include "server/kms/key_id.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "crypto/format/hkdf.h"
#include "server/keystore/names.h"
#include "server/rpc/bytes.h"

namespace sealbox::server {
namespace {

constexpr absl::string_view kPrefix = "sealbox:";
constexpr absl::string_view kFingerprintInfo = "sealbox kms v2 key_id";
constexpr size_t kFingerprintBytes = 8;

}  // namespace

absl::StatusOr<std::string> KmsKeyId(const KeyEntry& key, const KeyVersionEntry& version) {
  if (version.material == nullptr || version.material->empty()) {
    return absl::InternalError(absl::StrCat("version ", version.version, " of ",
                                            KeyRef(key.tenant, key.name),
                                            " has no material to name"));
  }
  absl::StatusOr<crypto::SecretBytes> fingerprint = crypto::HkdfSha256(
      version.material->span(), {}, AsBytes(kFingerprintInfo), kFingerprintBytes);
  if (!fingerprint.ok()) return fingerprint.status();
  // Not secret: a PRF's output under the material, as kube-apiserver will log it.
  const absl::string_view raw(reinterpret_cast<const char*>(fingerprint->data()),
                              fingerprint->size());
  return absl::StrCat(kPrefix, key.tenant, "/", key.name, ":v", version.version, ":",
                      absl::BytesToHexString(raw));
}

absl::StatusOr<KmsKeyIdParts> ParseKmsKeyId(absl::string_view key_id) {
  const auto invalid = [] {
    return absl::InvalidArgumentError(
        "the key_id is not one sealbox issued (sealbox:<tenant>/<key>:v<version>:<hex>)");
  };
  if (!absl::ConsumePrefix(&key_id, kPrefix)) return invalid();
  std::vector<absl::string_view> fields = absl::StrSplit(key_id, ':');
  if (fields.size() != 3) return invalid();
  std::vector<absl::string_view> names = absl::StrSplit(fields[0], '/');
  absl::string_view version = fields[1];
  KmsKeyIdParts parts;
  if (names.size() != 2 || !ValidateTenantName(names[0]).ok() || !ValidateKeyName(names[1]).ok() ||
      !absl::ConsumePrefix(&version, "v") || !absl::SimpleAtoi(version, &parts.version) ||
      parts.version == 0 || fields[2].size() != 2 * kFingerprintBytes) {
    return invalid();
  }
  parts.tenant = std::string(names[0]);
  parts.key = std::string(names[1]);
  return parts;
}

}  // namespace sealbox::server
