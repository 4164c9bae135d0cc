// The key_id a KMS v2 plugin answers with, which kube-apiserver stores beside every
// object and compares with Status's to notice a rotation: one per key version, and
// never the same for two keys, even for a key deleted and created again under the
// same name (Kubernetes' rule: a key_id is never reused).
//
//   sealbox:<tenant>/<key>:v<version>:<fingerprint>
//
// The fingerprint is 8 bytes of HKDF-SHA256 of the version's material (info
// "sealbox kms v2 key_id"), in hex: a new key's material is random, so a new key
// gives a new key_id, and it says nothing of the material (HKDF is a PRF keyed by
// it). key_ids are public: kube-apiserver logs them.
#ifndef SEALBOX_SERVER_KMS_KEY_ID_H_
#define SEALBOX_SERVER_KMS_KEY_ID_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/keystore/snapshot.h"

namespace sealbox::server {

// The key_id of `version` of `key`; INTERNAL if the version has no material (a
// destroyed version is never a primary one).
absl::StatusOr<std::string> KmsKeyId(const KeyEntry& key, const KeyVersionEntry& version);

// What a key_id names, as far as its text says (not checked against any key).
struct KmsKeyIdParts {
  std::string tenant;
  std::string key;
  uint32_t version = 0;
};

// INVALID_ARGUMENT when `key_id` is not of sealbox's form.
absl::StatusOr<KmsKeyIdParts> ParseKmsKeyId(absl::string_view key_id);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KMS_KEY_ID_H_
