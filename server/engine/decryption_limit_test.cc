#include "server/engine/decryption_limit.h"

#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

KeyEntry Key(const std::string& tenant, const std::string& name, uint32_t primary,
             int64_t created = 100) {
  KeyEntry key;
  key.tenant = tenant;
  key.name = name;
  key.primary_version = primary;
  key.versions[primary].version = primary;
  key.versions[primary].create_time_unix = created;
  return key;
}

TEST(DecryptionFailureLimit, RefusesAKeyAtItsLimitUntilRotated) {
  DecryptionFailureLimit limit(3);
  const KeyEntry key = Key("alpha", "default", 1);
  const KeyEntry other_tenant = Key("beta", "default", 1);
  EXPECT_FALSE(limit.RecordFailure(key));
  EXPECT_FALSE(limit.RecordFailure(key));
  EXPECT_TRUE(limit.Check(key).ok());
  EXPECT_TRUE(limit.RecordFailure(key));
  absl::Status refused = limit.Check(key);
  EXPECT_TRUE(IsDecryptionLimitReached(refused)) << refused;
  EXPECT_TRUE(limit.Check(other_tenant).ok());
  // A new primary version (rotation) starts a fresh count.
  const KeyEntry rotated = Key("alpha", "default", 2);
  EXPECT_TRUE(limit.Check(rotated).ok());
  EXPECT_FALSE(limit.RecordFailure(rotated));
  // So does the same key created again (same version number, another time).
  EXPECT_TRUE(limit.Check(Key("alpha", "default", 1, 200)).ok());
}

TEST(DecryptionFailureLimit, ZeroCountsNothing) {
  DecryptionFailureLimit limit(0);
  const KeyEntry key = Key("alpha", "default", 1);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(limit.RecordFailure(key));
  EXPECT_TRUE(limit.Check(key).ok());
}

}  // namespace
}  // namespace sealbox::server
