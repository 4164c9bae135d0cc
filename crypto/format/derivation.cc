#include "crypto/format/derivation.h"

#include "absl/status/status.h"
#include "crypto/format/hkdf.h"
#include "crypto/format/wire.h"

namespace sealbox::crypto {
namespace {

constexpr absl::string_view kUnaryLabel = "sealbox/v1/unary";
constexpr absl::string_view kStreamLabel = "sealbox/v1/stream";

// Length prefixes keep the fields apart: ("ab", "c") and ("a", "bc") differ.
absl::StatusOr<std::vector<uint8_t>> LabelAndNames(absl::string_view label,
                                                   absl::string_view tenant,
                                                   absl::string_view key_name) {
  if (tenant.size() > 255 || key_name.size() > 255) {
    return absl::InvalidArgumentError("tenant and key names are limited to 255 bytes");
  }
  std::vector<uint8_t> info(label.begin(), label.end());
  for (absl::string_view name : {tenant, key_name}) {
    info.push_back(static_cast<uint8_t>(name.size()));
    info.insert(info.end(), name.begin(), name.end());
  }
  return info;
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> UnaryInfo(absl::string_view tenant,
                                               absl::string_view key_name) {
  return LabelAndNames(kUnaryLabel, tenant, key_name);
}

absl::StatusOr<std::vector<uint8_t>> StreamInfo(absl::string_view tenant,
                                                absl::string_view key_name,
                                                absl::Span<const uint8_t> aad) {
  absl::StatusOr<std::vector<uint8_t>> info = LabelAndNames(kStreamLabel, tenant, key_name);
  if (!info.ok()) return info;
  AppendBigEndian64(aad.size(), *info);
  info->insert(info->end(), aad.begin(), aad.end());
  return info;
}

absl::StatusOr<SecretBytes> DeriveSubkey(absl::Span<const uint8_t> material,
                                         absl::Span<const uint8_t> salt,
                                         absl::Span<const uint8_t> info) {
  if (material.size() != 16 && material.size() != 32) {
    return absl::InvalidArgumentError("key material must be 16 or 32 bytes");
  }
  return HkdfSha256(material, salt, info, material.size());
}

}  // namespace sealbox::crypto
