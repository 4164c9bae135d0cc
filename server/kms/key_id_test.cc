#include "server/kms/key_id.h"

#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

KeyEntry Key(const std::string& tenant, const std::string& name) {
  KeyEntry key;
  key.tenant = tenant;
  key.name = name;
  return key;
}

KeyVersionEntry Version(uint32_t number, uint8_t fill) {
  KeyVersionEntry version;
  version.version = number;
  version.material = std::make_shared<const crypto::SecretBytes>(std::vector<uint8_t>(32, fill));
  return version;
}

TEST(KmsKeyIdTest, NamesTheKeyAndVersionAndFingerprintsTheMaterial) {
  absl::StatusOr<std::string> id = KmsKeyId(Key("acme", "k8s-secrets"), Version(3, 7));
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(absl::StartsWith(*id, "sealbox:acme/k8s-secrets:v3:")) << *id;
  EXPECT_EQ(id->size(), std::string("sealbox:acme/k8s-secrets:v3:").size() + 16);
  // The same version, the same key_id; it never depends on anything else.
  EXPECT_EQ(*id, *KmsKeyId(Key("acme", "k8s-secrets"), Version(3, 7)));
}

TEST(KmsKeyIdTest, AKeyCreatedAgainUnderTheSameNameGetsANewKeyId) {
  EXPECT_NE(*KmsKeyId(Key("acme", "k"), Version(1, 1)), *KmsKeyId(Key("acme", "k"), Version(1, 2)));
}

TEST(KmsKeyIdTest, TheFingerprintIsNotTheMaterial) {
  std::string id = *KmsKeyId(Key("acme", "k"), Version(1, 0xab));
  EXPECT_EQ(id.find("abab"), std::string::npos) << id;
}

TEST(KmsKeyIdTest, AVersionWithoutMaterialHasNone) {
  KeyVersionEntry destroyed;
  destroyed.version = 2;
  EXPECT_EQ(KmsKeyId(Key("acme", "k"), destroyed).status().code(), absl::StatusCode::kInternal);
}

TEST(KmsKeyIdTest, ParsesWhatItMakes) {
  absl::StatusOr<KmsKeyIdParts> parts =
      ParseKmsKeyId(*KmsKeyId(Key("acme", "db.main"), Version(12, 5)));
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->tenant, "acme");
  EXPECT_EQ(parts->key, "db.main");
  EXPECT_EQ(parts->version, 12u);
}

TEST(KmsKeyIdTest, RefusesOtherKeyIds) {
  for (const char* id :
       {"", "sealbox:", "k8s-key-1", "sealbox:acme/k:v1", "sealbox:acme:v1:0011223344556677",
        "sealbox:acme/k:1:0011223344556677", "sealbox:acme/k:v0:0011223344556677",
        "sealbox:Acme/k:v1:0011223344556677", "sealbox:acme/k:v1:0011"}) {
    EXPECT_EQ(ParseKmsKeyId(id).status().code(), absl::StatusCode::kInvalidArgument) << id;
  }
}

}  // namespace
}  // namespace sealbox::server
