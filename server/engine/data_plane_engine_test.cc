// DataPlaneEngine on its own, over a real keystore (the file backend in a temporary
// directory): what it seals opens, with the version it names; tenants are isolated;
// versions out of use do not open; forgeries fail alike and count against the key's
// limit; a key or version this snapshot lacks is waited for only when allowed.
#include "server/engine/data_plane_engine.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/keystore/keystore.h"
#include "server/keystore/testing/test_store.h"
#include "server/rpc/bytes.h"

namespace sealbox::server {
namespace {

using ::testing::HasSubstr;

class DataPlaneEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::NewTestStore("file");
    ASSERT_NE(store_, nullptr);
    auto keystore = testing::OpenKeystore(*store_, kek_);
    ASSERT_TRUE(keystore.ok()) << keystore.status();
    keystore_ = *std::move(keystore);
    for (const char* tenant : {"acme", "other"}) {
      ASSERT_TRUE(keystore_->tenants().CreateTenant(tenant).ok());
      ASSERT_TRUE(keystore_->keys().CreateKey(tenant, "k", KeyAlgorithm::kAes256Gcm).ok());
    }
  }

  // An engine over the keystore's epochs; `max_failures` 0: no limit.
  std::unique_ptr<DataPlaneEngine> Engine(uint64_t max_failures = 0) {
    return std::make_unique<DataPlaneEngine>(keystore_->epochs(), max_failures, [this] {
      ++catch_ups_;
      return keystore_->snapshot();
    });
  }

  std::string Seal(DataPlaneEngine& engine, const std::string& tenant,
                   const std::string& plaintext) {
    std::string ciphertext;
    absl::StatusOr<uint32_t> version = engine.Seal(*keystore_->snapshot(), tenant, "k",
                                                   AsBytes(plaintext), AsBytes("aad"), ciphertext);
    EXPECT_TRUE(version.ok()) << version.status();
    return ciphertext;
  }

  absl::StatusOr<std::string> Open(DataPlaneEngine& engine, const std::string& tenant,
                                   const std::string& ciphertext) {
    std::string plaintext;
    absl::StatusOr<uint32_t> version = engine.Open(*keystore_->snapshot(), tenant, "k",
                                                   AsBytes(ciphertext), AsBytes("aad"), plaintext);
    if (!version.ok()) return version.status();
    return plaintext;
  }

  std::unique_ptr<testing::TestStore> store_;
  Kek kek_ = testing::RandomKek();
  std::unique_ptr<Keystore> keystore_;
  int catch_ups_ = 0;
};

TEST_F(DataPlaneEngineTest, WhatItSealsOpensUnderTheVersionItNames) {
  auto engine = Engine();
  std::string ciphertext;
  absl::StatusOr<uint32_t> sealed = engine->Seal(
      *keystore_->snapshot(), "acme", "k", AsBytes("attack at dawn"), AsBytes("aad"), ciphertext);
  ASSERT_TRUE(sealed.ok()) << sealed.status();
  EXPECT_EQ(*sealed, 1u);
  std::string plaintext;
  absl::StatusOr<uint32_t> opened = engine->Open(*keystore_->snapshot(), "acme", "k",
                                                 AsBytes(ciphertext), AsBytes("aad"), plaintext);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(*opened, 1u);
  EXPECT_EQ(plaintext, "attack at dawn");
  // The associated data is bound in.
  std::string wrong;
  absl::StatusOr<uint32_t> other_aad =
      engine->Open(*keystore_->snapshot(), "acme", "k", AsBytes(ciphertext), AsBytes("AAD"), wrong);
  EXPECT_THAT(other_aad.status().message(), HasSubstr("decryption failed"));
  EXPECT_TRUE(wrong.empty());
}

TEST_F(DataPlaneEngineTest, TenantsAreIsolated) {
  auto engine = Engine();
  const std::string ciphertext = Seal(*engine, "acme", "secret");
  // The other tenant's key of the same name fails like garbage.
  absl::StatusOr<std::string> theirs = Open(*engine, "other", ciphertext);
  EXPECT_TRUE(absl::IsInvalidArgument(theirs.status())) << theirs.status();
  EXPECT_THAT(theirs.status().message(), HasSubstr("decryption failed"));
  // A key that exists only elsewhere is NOT_FOUND like one that exists nowhere.
  std::string out;
  absl::StatusOr<uint32_t> nowhere =
      engine->Seal(*keystore_->snapshot(), "nobody", "k", AsBytes("x"), {}, out);
  EXPECT_TRUE(absl::IsNotFound(nowhere.status())) << nowhere.status();
}

TEST_F(DataPlaneEngineTest, RotationSealsUnderTheNewVersionAndStillOpensTheOld) {
  auto engine = Engine();
  const std::string old = Seal(*engine, "acme", "before");
  ASSERT_TRUE(keystore_->keys().RotateKey("acme", "k").ok());
  std::string fresh;
  absl::StatusOr<uint32_t> version =
      engine->Seal(*keystore_->snapshot(), "acme", "k", AsBytes("after"), AsBytes("aad"), fresh);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, 2u);
  EXPECT_EQ(*Open(*engine, "acme", old), "before");
  EXPECT_EQ(*Open(*engine, "acme", fresh), "after");

  std::string rewrapped;
  absl::StatusOr<Rewrapped> r =
      engine->Rewrap(*keystore_->snapshot(), "acme", "k", AsBytes(old), AsBytes("aad"), rewrapped);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->previous_key_version, 1u);
  EXPECT_EQ(r->key_version, 2u);
  EXPECT_EQ(*Open(*engine, "acme", rewrapped), "before");
}

TEST_F(DataPlaneEngineTest, VersionsOutOfUseDoNotOpen) {
  auto engine = Engine();
  const std::string v1 = Seal(*engine, "acme", "one");
  ASSERT_TRUE(keystore_->keys().RotateKey("acme", "k").ok());
  ASSERT_TRUE(keystore_->keys().SetVersionState("acme", "k", 1, VersionState::kDisabled).ok());
  absl::StatusOr<std::string> disabled = Open(*engine, "acme", v1);
  EXPECT_TRUE(absl::IsFailedPrecondition(disabled.status())) << disabled.status();
  ASSERT_TRUE(keystore_->keys().SetVersionState("acme", "k", 1, VersionState::kEnabled).ok());
  EXPECT_EQ(*Open(*engine, "acme", v1), "one");
  ASSERT_TRUE(keystore_->keys().SetMinDecryptionVersion("acme", "k", 2).ok());
  absl::StatusOr<std::string> below = Open(*engine, "acme", v1);
  EXPECT_TRUE(absl::IsFailedPrecondition(below.status())) << below.status();
}

TEST_F(DataPlaneEngineTest, ForgeriesFailAlikeAndReachTheKeysLimit) {
  auto engine = Engine(/*max_failures=*/2);
  std::string forged = Seal(*engine, "acme", "payload");
  forged.back() ^= 1;  // the tag
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::string> opened = Open(*engine, "acme", forged);
    EXPECT_TRUE(absl::IsInvalidArgument(opened.status())) << i << ": " << opened.status();
    EXPECT_THAT(opened.status().message(), HasSubstr("decryption failed"));
  }
  // The limit is reached: even a genuine ciphertext is refused until rotation.
  const std::string genuine = Seal(*engine, "acme", "payload");
  absl::StatusOr<std::string> limited = Open(*engine, "acme", genuine);
  EXPECT_TRUE(absl::IsResourceExhausted(limited.status())) << limited.status();
  ASSERT_TRUE(keystore_->keys().RotateKey("acme", "k").ok());
  EXPECT_EQ(*Open(*engine, "acme", genuine), "payload");
  // The other tenant's key was never limited.
  EXPECT_EQ(*Open(*engine, "other", Seal(*engine, "other", "theirs")), "theirs");
}

TEST_F(DataPlaneEngineTest, AKeyTheSnapshotLacksIsWaitedForOnlyWhenAllowed) {
  auto engine = Engine();
  std::shared_ptr<const Snapshot> before = keystore_->snapshot();
  ASSERT_TRUE(keystore_->keys().CreateKey("acme", "new", KeyAlgorithm::kAes256Gcm).ok());
  std::string out;
  absl::StatusOr<uint32_t> waited =
      engine->Seal(*before, "acme", "new", AsBytes("x"), {}, out, /*may_catch_up=*/true);
  EXPECT_TRUE(waited.ok()) << waited.status();
  EXPECT_EQ(catch_ups_, 1);
  absl::StatusOr<uint32_t> not_waited =
      engine->Seal(*before, "acme", "new", AsBytes("x"), {}, out, /*may_catch_up=*/false);
  EXPECT_TRUE(absl::IsNotFound(not_waited.status())) << not_waited.status();
  EXPECT_EQ(catch_ups_, 1);
  // A key the snapshot has needs no waiting.
  ASSERT_TRUE(engine->Seal(*before, "acme", "k", AsBytes("x"), {}, out).ok());
  EXPECT_EQ(catch_ups_, 1);
}

TEST_F(DataPlaneEngineTest, AUnaryCiphertextIsNotAStream) {
  auto engine = Engine();
  const std::string ciphertext = Seal(*engine, "acme", "unary");
  absl::Status status = CheckOpenStreamFormat(static_cast<uint8_t>(ciphertext[0]));
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("open it with Open"));
}

}  // namespace
}  // namespace sealbox::server
