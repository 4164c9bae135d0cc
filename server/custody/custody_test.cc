// The custody library against a real HSM: SoftHSM2 over PKCS#11, a token of this
// test's own (testing/soft_hsm.h).
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/custody/pkcs11_root_key.h"
#include "server/custody/sealed_kek.h"
#include "server/custody/sealed_kek_source.h"
#include "server/custody/sealed_kek_store.h"
#include "server/custody/testing/soft_hsm.h"

namespace sealbox::server::custody {
namespace {

using ::testing::HasSubstr;

absl::Span<const uint8_t> Bytes(absl::string_view s) {
  return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

Kek KekOf(uint8_t fill) {
  std::string bytes(kKekBytes, static_cast<char>(fill));
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(bytes[i] + i);
  return *Kek::FromBytes(Bytes(bytes));
}

class CustodyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    hsm_ = new testing::SoftHsm();
    hsm_->MakeKey("root");
    hsm_->MakeKey("other-root");
    hsm_->MakeKey("leaky", /*extractable=*/true);
  }

  std::unique_ptr<Pkcs11RootKey> Open(const std::string& label) {
    absl::StatusOr<std::unique_ptr<Pkcs11RootKey>> key = Pkcs11RootKey::Open(hsm_->Options(label));
    EXPECT_TRUE(key.ok()) << key.status();
    return key.ok() ? *std::move(key) : nullptr;
  }

  static testing::SoftHsm* hsm_;
};

testing::SoftHsm* CustodyTest::hsm_ = nullptr;

TEST_F(CustodyTest, TheHsmKeyWrapsAndUnwrapsBoundToItsContext) {
  std::unique_ptr<Pkcs11RootKey> root = Open("root");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->Describe(), "PKCS#11 key 'root' on token 'sealbox'");
  const std::string secret = "thirty-two bytes of a secret key";
  absl::StatusOr<std::string> wrapped = root->Wrap(Bytes(secret), "context a");
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  EXPECT_EQ(wrapped->size(), 12 + secret.size() + 16);
  EXPECT_EQ(wrapped->find(secret), std::string::npos);
  absl::StatusOr<crypto::SecretBytes> unwrapped = root->Unwrap(*wrapped, "context a");
  ASSERT_TRUE(unwrapped.ok()) << unwrapped.status();
  EXPECT_EQ(std::string(unwrapped->span().begin(), unwrapped->span().end()), secret);
  // Two wraps of one secret differ (a fresh IV each).
  EXPECT_NE(*root->Wrap(Bytes(secret), "context a"), *wrapped);

  EXPECT_TRUE(absl::IsFailedPrecondition(root->Unwrap(*wrapped, "context b").status()));
  std::string altered = *wrapped;
  altered[20] ^= 1;
  absl::Status refused = root->Unwrap(altered, "context a").status();
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("another HSM key sealed it, or it was altered"));
  EXPECT_TRUE(
      absl::IsFailedPrecondition(Open("other-root")->Unwrap(*wrapped, "context a").status()));
  EXPECT_TRUE(root->Check().ok());
}

TEST_F(CustodyTest, OpeningRefusesWhatAnOperatorMustFixWithASentence) {
  HsmOptions wrong_pin = hsm_->Options("root");
  wrong_pin.pin = crypto::SecretBytes(Bytes("not-the-pin"));
  wrong_pin.pin_source = "the PIN in pin.txt (--hsm-pin-file)";
  absl::Status status = Pkcs11RootKey::Open(std::move(wrong_pin)).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status));
  EXPECT_EQ(
      status.message(),
      "token 'sealbox' refused the PIN in pin.txt (--hsm-pin-file): CKR_PIN_INCORRECT (0xa0)");

  status = Pkcs11RootKey::Open(hsm_->Options("missing")).status();
  EXPECT_THAT(status.message(),
              HasSubstr("token 'sealbox' has no secret key labelled 'missing' (--hsm-key)"));
  status = Pkcs11RootKey::Open(hsm_->Options("leaky")).status();
  EXPECT_THAT(status.message(),
              HasSubstr("HSM key 'leaky' on token 'sealbox' could leave the HSM (CKA_EXTRACTABLE "
                        "is true)"));
  HsmOptions no_token = hsm_->Options("root");
  no_token.token = "prod";
  status = Pkcs11RootKey::Open(std::move(no_token)).status();
  EXPECT_THAT(status.message(), HasSubstr("has no token labelled 'prod' (--hsm-token); its "
                                          "tokens: 'sealbox'"));
  HsmOptions no_module = hsm_->Options("root");
  no_module.module = "/nonexistent/libpkcs11.so";
  status = Pkcs11RootKey::Open(std::move(no_module)).status();
  EXPECT_THAT(status.message(), HasSubstr("cannot load the PKCS#11 module /nonexistent/"));
}

TEST_F(CustodyTest, CreateKeyMakesANeverExtractableKeyOnceAndOnlyAtOpen) {
  HsmOptions create = hsm_->Options("made-here");
  create.create_key = true;
  absl::StatusOr<std::unique_ptr<Pkcs11RootKey>> made = Pkcs11RootKey::Open(std::move(create));
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_TRUE((*made)->created_key());
  // Found, not made again; and it passed the sensitive, never-extractable check.
  std::unique_ptr<Pkcs11RootKey> again = Open("made-here");
  ASSERT_NE(again, nullptr);
  EXPECT_FALSE(again->created_key());
  absl::StatusOr<std::string> wrapped = (*made)->Wrap(Bytes("secret"), "c");
  ASSERT_TRUE(wrapped.ok());
  EXPECT_TRUE(again->Unwrap(*wrapped, "c").ok());
}

TEST_F(CustodyTest, ASealedKekUnsealsToItsKekAndCarriesARotation) {
  std::unique_ptr<Pkcs11RootKey> root = Open("root");
  ASSERT_NE(root, nullptr);
  const Kek first = KekOf(1), second = KekOf(2);
  const absl::Time made = absl::FromUnixSeconds(1780000000);
  absl::StatusOr<std::string> sealed = SealKek(*root, first, made);
  ASSERT_TRUE(sealed.ok()) << sealed.status();
  absl::StatusOr<std::shared_ptr<const KekRing>> ring = UnsealKeks(*root, *sealed, "here", 7);
  ASSERT_TRUE(ring.ok()) << ring.status();
  EXPECT_TRUE(FingerprintMatches((*ring)->current, FingerprintOf(first).data()));
  EXPECT_TRUE((*ring)->previous.empty());
  EXPECT_EQ((*ring)->sealed_revision, 7);
  absl::StatusOr<SealedKekInfo> info = InfoOf(*sealed, "here");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->created, made);
  EXPECT_EQ(info->previous, 0);

  absl::StatusOr<std::string> rotating = SealNextKek(*root, second, made + absl::Hours(1), *sealed);
  ASSERT_TRUE(rotating.ok());
  ring = UnsealKeks(*root, *rotating, "here", 8);
  ASSERT_TRUE(ring.ok());
  EXPECT_TRUE(FingerprintMatches((*ring)->current, FingerprintOf(second).data()));
  ASSERT_EQ((*ring)->previous.size(), 1u);
  EXPECT_TRUE(FingerprintMatches((*ring)->previous[0], FingerprintOf(first).data()));
  EXPECT_EQ(InfoOf(*rotating, "here")->previous, 1);

  absl::StatusOr<std::string> done = DropPreviousKeks(*rotating);
  ASSERT_TRUE(done.ok());
  ring = UnsealKeks(*root, *done, "here", 9);
  ASSERT_TRUE(ring.ok());
  EXPECT_TRUE((*ring)->previous.empty());

  // Another HSM key, damage, and nothing at all.
  absl::Status other = UnsealKeks(*Open("other-root"), *sealed, "here", 0).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(other));
  EXPECT_THAT(other.message(),
              HasSubstr("(here, sealed by PKCS#11 key 'root' on token 'sealbox')"));
  std::string damaged = *sealed;
  damaged.resize(damaged.size() / 2);
  EXPECT_TRUE(absl::IsDataLoss(UnsealKeks(*root, damaged, "here", 0).status()));
  EXPECT_TRUE(absl::IsDataLoss(UnsealKeks(*root, "", "here", 0).status()));
}

TEST_F(CustodyTest, TheFileStoreIsWrittenOnceThenReplacedOnlyIfUnchanged) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/store");
  ASSERT_EQ(system(absl::StrCat("mkdir -p ", dir).c_str()), 0);
  std::unique_ptr<SealedKekStore> store = FileSealedKekStore(dir);
  EXPECT_EQ(store->Describe(), dir + "/kek.sealed");
  EXPECT_FALSE(store->Read()->has_value());
  absl::StatusOr<SealedKekStore::Stored> first = store->CreateIfAbsent("first");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->bytes, "first");
  // A second --init agrees on the first.
  EXPECT_EQ(FileSealedKekStore(dir)->CreateIfAbsent("second")->bytes, "first");
  absl::StatusOr<SealedKekStore::Stored> replaced = store->Replace(*first, "rotated");
  ASSERT_TRUE(replaced.ok());
  EXPECT_TRUE(absl::IsAborted(store->Replace(*first, "stale").status()));
  EXPECT_EQ((*store->Read())->bytes, "rotated");
}

TEST_F(CustodyTest, TheSourceUnsealsOnlyWhatChanged) {
  std::unique_ptr<Pkcs11RootKey> root = Open("root");
  ASSERT_NE(root, nullptr);
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/source");
  ASSERT_EQ(system(absl::StrCat("mkdir -p ", dir).c_str()), 0);
  std::unique_ptr<SealedKekStore> store = FileSealedKekStore(dir);
  absl::StatusOr<SealedKekStore::Stored> stored =
      store->CreateIfAbsent(*SealKek(*root, KekOf(3), absl::Now()));
  ASSERT_TRUE(stored.ok());
  SealedKekSource source(root.get(), store.get());
  absl::StatusOr<std::shared_ptr<const KekRing>> ring = source.Current();
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(*source.Current(), *ring);  // the same ring: nothing unsealed again
  ASSERT_TRUE(
      store->Replace(*stored, *SealNextKek(*root, KekOf(4), absl::Now(), stored->bytes)).ok());
  absl::StatusOr<std::shared_ptr<const KekRing>> next = source.Current();
  ASSERT_TRUE(next.ok());
  EXPECT_NE(*next, *ring);
  EXPECT_TRUE(FingerprintMatches((*next)->current, FingerprintOf(KekOf(4)).data()));
  EXPECT_EQ((*next)->previous.size(), 1u);
}

TEST_F(CustodyTest, CheckSeesTheTokenGoAndComeBack) {
  std::unique_ptr<Pkcs11RootKey> root = Open("root");
  ASSERT_NE(root, nullptr);
  ASSERT_TRUE(root->Check().ok());
  const std::string away = hsm_->token_dir() + ".away";
  ASSERT_EQ(rename(hsm_->token_dir().c_str(), away.c_str()), 0);
  absl::Status lost = root->Check();
  ASSERT_EQ(rename(away.c_str(), hsm_->token_dir().c_str()), 0);
  EXPECT_TRUE(absl::IsUnavailable(lost)) << lost;
  EXPECT_THAT(lost.message(), HasSubstr("no secret key labelled 'root'"));
  absl::Status back = root->Check();
  EXPECT_TRUE(back.ok()) << back;
  EXPECT_TRUE(root->Wrap(Bytes("after"), "c").ok());
}

}  // namespace
}  // namespace sealbox::server::custody
