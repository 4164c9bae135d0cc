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
#include "server/keystore/call_snapshot.h"
#include "server/keystore/keystore.h"
#include "server/keystore/testing/test_store.h"
#include "server/rpc/bytes.h"

namespace sealbox::server {
namespace {

using ::testing::HasSubstr;

// The keystore as the engine's calls see it, counting the waits for the store.
class CountingSource final : public SnapshotSource {
 public:
  explicit CountingSource(Keystore** keystore) : keystore_(keystore) {}
  std::shared_ptr<const Snapshot> Current() const override { return (*keystore_)->snapshot(); }
  std::shared_ptr<const Snapshot> CaughtUp() override {
    ++caught_up;
    return (*keystore_)->snapshot();
  }
  int caught_up = 0;

 private:
  Keystore** keystore_;
};

class DataPlaneEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::NewTestStore("file");
    ASSERT_NE(store_, nullptr);
    auto keystore = testing::OpenKeystore(*store_, kek_);
    ASSERT_TRUE(keystore.ok()) << keystore.status();
    keystore_ = *std::move(keystore);
    keystore_ptr_ = keystore_.get();
    for (const char* tenant : {"acme", "other"}) {
      ASSERT_TRUE(keystore_->tenants().CreateTenant(tenant).ok());
      ASSERT_TRUE(keystore_->keys().CreateKey(tenant, "k", KeyAlgorithm::kAes256Gcm).ok());
    }
  }

  // An engine over the keystore's epochs; `max_failures` 0: no limit.
  std::unique_ptr<DataPlaneEngine> Engine(uint64_t max_failures = 0) {
    return std::make_unique<DataPlaneEngine>(keystore_->epochs(), max_failures);
  }

  // A new call's view of the keystore, which may wait once.
  CallSnapshot View() { return CallSnapshot(keystore_->snapshot(), &source_); }

  std::string Seal(DataPlaneEngine& engine, const std::string& tenant,
                   const std::string& plaintext) {
    CallSnapshot view = View();
    std::string ciphertext;
    absl::StatusOr<uint32_t> version =
        engine.Seal(CallKey{view, tenant, "k"}, AsBytes(plaintext), AsBytes("aad"), ciphertext);
    EXPECT_TRUE(version.ok()) << version.status();
    return ciphertext;
  }

  absl::StatusOr<std::string> Open(DataPlaneEngine& engine, const std::string& tenant,
                                   const std::string& ciphertext) {
    CallSnapshot view = View();
    std::string plaintext;
    absl::StatusOr<uint32_t> version =
        engine.Open(CallKey{view, tenant, "k"}, AsBytes(ciphertext), AsBytes("aad"), plaintext);
    if (!version.ok()) return version.status();
    return plaintext;
  }

  std::unique_ptr<testing::TestStore> store_;
  Kek kek_ = testing::RandomKek();
  std::unique_ptr<Keystore> keystore_;
  Keystore* keystore_ptr_ = nullptr;
  CountingSource source_{&keystore_ptr_};
};

TEST_F(DataPlaneEngineTest, WhatItSealsOpensUnderTheVersionItNames) {
  auto engine = Engine();
  CallSnapshot view = View();
  const CallKey key{view, "acme", "k"};
  std::string ciphertext;
  absl::StatusOr<uint32_t> sealed =
      engine->Seal(key, AsBytes("attack at dawn"), AsBytes("aad"), ciphertext);
  ASSERT_TRUE(sealed.ok()) << sealed.status();
  EXPECT_EQ(*sealed, 1u);
  std::string plaintext;
  absl::StatusOr<uint32_t> opened =
      engine->Open(key, AsBytes(ciphertext), AsBytes("aad"), plaintext);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(*opened, 1u);
  EXPECT_EQ(plaintext, "attack at dawn");
  // The associated data is bound in.
  std::string wrong;
  absl::StatusOr<uint32_t> other_aad =
      engine->Open(key, AsBytes(ciphertext), AsBytes("AAD"), wrong);
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
  CallSnapshot view = View();
  absl::StatusOr<uint32_t> nowhere =
      engine->Seal(CallKey{view, "nobody", "k"}, AsBytes("x"), {}, out);
  EXPECT_TRUE(absl::IsNotFound(nowhere.status())) << nowhere.status();
}

TEST_F(DataPlaneEngineTest, RotationSealsUnderTheNewVersionAndStillOpensTheOld) {
  auto engine = Engine();
  const std::string old = Seal(*engine, "acme", "before");
  ASSERT_TRUE(keystore_->keys().RotateKey("acme", "k").ok());
  std::string fresh;
  CallSnapshot view = View();
  absl::StatusOr<uint32_t> version =
      engine->Seal(CallKey{view, "acme", "k"}, AsBytes("after"), AsBytes("aad"), fresh);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, 2u);
  EXPECT_EQ(*Open(*engine, "acme", old), "before");
  EXPECT_EQ(*Open(*engine, "acme", fresh), "after");

  std::string rewrapped;
  absl::StatusOr<Rewrapped> r =
      engine->Rewrap(CallKey{view, "acme", "k"}, AsBytes(old), AsBytes("aad"), rewrapped);
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

TEST_F(DataPlaneEngineTest, AKeyTheSnapshotLacksIsWaitedForOncePerCall) {
  auto engine = Engine();
  CallSnapshot call(keystore_->snapshot(), &source_);
  ASSERT_TRUE(keystore_->keys().CreateKey("acme", "new", KeyAlgorithm::kAes256Gcm).ok());
  ASSERT_TRUE(keystore_->keys().CreateKey("acme", "newer", KeyAlgorithm::kAes256Gcm).ok());
  std::string out;
  // A key the call's snapshot has needs no waiting.
  ASSERT_TRUE(engine->Seal(CallKey{call, "acme", "k"}, AsBytes("x"), {}, out).ok());
  EXPECT_EQ(source_.caught_up, 0);
  // One it lacks is waited for, and the call keeps what the wait brought.
  absl::StatusOr<uint32_t> waited =
      engine->Seal(CallKey{call, "acme", "new"}, AsBytes("x"), {}, out);
  EXPECT_TRUE(waited.ok()) << waited.status();
  EXPECT_TRUE(engine->Seal(CallKey{call, "acme", "newer"}, AsBytes("x"), {}, out).ok());
  EXPECT_EQ(source_.caught_up, 1);
  // A key nowhere costs no second wait in the same call (a batch's thousand items).
  absl::StatusOr<uint32_t> missing =
      engine->Seal(CallKey{call, "acme", "missing"}, AsBytes("x"), {}, out);
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_EQ(source_.caught_up, 1);
  // A view without a source (a health probe) never waits.
  CallSnapshot probe(call.shared());
  EXPECT_TRUE(absl::IsNotFound(
      engine->Seal(CallKey{probe, "acme", "missing"}, AsBytes("x"), {}, out).status()));
  EXPECT_EQ(source_.caught_up, 1);
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
