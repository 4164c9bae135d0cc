// The batch calls, data keys and checksums of the data plane (data.proto), against a
// real server: every item of a batch gets its own answer, a wrong checksum is
// refused before anything is sealed or opened, and a data key opens with Open and
// moves to a new key version with Rewrap.
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "crypto/crc32c/crc32c.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "tests/service/service_fixture.h"

namespace sealbox::server {
namespace {

using crypto::Crc32c;
using ::testing::HasSubstr;

class DataPlaneCallsTest : public service_testing::ServiceTest {
 protected:
  // A context carrying `tenant`'s token.
  std::unique_ptr<grpc::ClientContext> As(const std::string& tenant) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + tokens_[tenant]);
    return context;
  }

  v1::SealRequest SealItem(const std::string& key, const std::string& plaintext,
                           const std::string& aad = "") {
    v1::SealRequest item;
    item.set_key(key);
    item.set_plaintext(plaintext);
    item.set_associated_data(aad);
    return item;
  }

  v1::OpenRequest OpenItem(const std::string& key, const std::string& ciphertext,
                           const std::string& aad = "") {
    v1::OpenRequest item;
    item.set_key(key);
    item.set_ciphertext(ciphertext);
    item.set_associated_data(aad);
    return item;
  }

  // A metric's line as RenderMetrics prints it, or "" if absent.
  std::string Metric(const std::string& name) {
    const std::string all = server_->RenderMetrics();
    const size_t at = all.find("\n" + name + " ");
    if (at == std::string::npos) return "";
    return all.substr(at + 1, all.find('\n', at + 1) - at - 1);
  }

  void Rotate() {
    v1::KeyRef ref;
    ref.set_tenant("alpha");
    ref.set_key("default");
    v1::Key key;
    ASSERT_TRUE(AdminCall(&v1::Admin::Stub::RotateKey, ref, &key).ok());
  }
};

TEST_F(DataPlaneCallsTest, ChecksumsAreVerifiedAndReturned) {
  const std::string plaintext = "4111 1111 1111 1111", aad = "customer-42";
  v1::SealRequest request = SealItem("default", plaintext, aad);
  request.mutable_plaintext_crc32c()->set_value(Crc32c(plaintext));
  request.mutable_associated_data_crc32c()->set_value(Crc32c(aad));
  v1::SealResponse sealed;
  ASSERT_TRUE(crypto_->Seal(As("alpha").get(), request, &sealed).ok());
  EXPECT_TRUE(sealed.verified_plaintext_crc32c());
  EXPECT_TRUE(sealed.verified_associated_data_crc32c());
  EXPECT_EQ(sealed.ciphertext_crc32c(), Crc32c(sealed.ciphertext()));

  v1::OpenRequest open = OpenItem("default", sealed.ciphertext(), aad);
  open.mutable_ciphertext_crc32c()->set_value(Crc32c(sealed.ciphertext()));
  v1::OpenResponse opened;
  ASSERT_TRUE(crypto_->Open(As("alpha").get(), open, &opened).ok());
  EXPECT_EQ(opened.plaintext(), plaintext);
  EXPECT_EQ(opened.plaintext_crc32c(), Crc32c(plaintext));
  EXPECT_TRUE(opened.verified_ciphertext_crc32c());
  EXPECT_FALSE(opened.verified_associated_data_crc32c());  // none was given

  // A checksum that does not match: refused before any work, nothing sealed,
  // nothing opened, no decryption failure counted. A zero is a checksum too.
  const std::string sealed_bytes = Metric("sealbox_plaintext_bytes_sealed_total");
  for (uint32_t wrong : {Crc32c(plaintext) ^ 1u, 0u}) {
    request.mutable_plaintext_crc32c()->set_value(wrong);
    const grpc::Status refused = crypto_->Seal(As("alpha").get(), request, &sealed);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(refused.error_message(), HasSubstr("checksum mismatch: plaintext_crc32c"));
  }
  request.mutable_plaintext_crc32c()->set_value(Crc32c(plaintext));
  request.mutable_associated_data_crc32c()->set_value(Crc32c(aad) + 1);
  EXPECT_THAT(crypto_->Seal(As("alpha").get(), request, &sealed).error_message(),
              HasSubstr("checksum mismatch: associated_data_crc32c"));
  EXPECT_EQ(Metric("sealbox_plaintext_bytes_sealed_total"), sealed_bytes);

  open.mutable_ciphertext_crc32c()->set_value(Crc32c(sealed.ciphertext()) ^ 0x80000000u);
  EXPECT_THAT(crypto_->Open(As("alpha").get(), open, &opened).error_message(),
              HasSubstr("checksum mismatch: ciphertext_crc32c"));
  v1::RewrapRequest rewrap;
  rewrap.set_key("default");
  rewrap.set_ciphertext(sealed.ciphertext());
  rewrap.set_associated_data(aad);
  rewrap.mutable_associated_data_crc32c()->set_value(Crc32c("customer-43"));
  v1::RewrapResponse rewrapped;
  EXPECT_THAT(crypto_->Rewrap(As("alpha").get(), rewrap, &rewrapped).error_message(),
              HasSubstr("checksum mismatch: associated_data_crc32c"));
  EXPECT_EQ(Metric("sealbox_decryption_failures_total"), "sealbox_decryption_failures_total 0");
  rewrap.mutable_associated_data_crc32c()->set_value(Crc32c(aad));
  ASSERT_TRUE(crypto_->Rewrap(As("alpha").get(), rewrap, &rewrapped).ok());
  EXPECT_EQ(rewrapped.ciphertext_crc32c(), Crc32c(rewrapped.ciphertext()));
  EXPECT_TRUE(rewrapped.verified_associated_data_crc32c());
  EXPECT_FALSE(rewrapped.verified_ciphertext_crc32c());
}

TEST_F(DataPlaneCallsTest, EveryBatchItemGetsItsOwnAnswer) {
  // A ciphertext under version 1, which is then disabled.
  v1::SealResponse old;
  ASSERT_TRUE(Seal("alpha", "default", "old", "", &old).ok());
  Rotate();
  v1::KeyVersionRef version;
  version.set_tenant("alpha");
  version.set_key("default");
  version.set_version(1);
  v1::Key key;
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::DisableKeyVersion, version, &key).ok());

  v1::SealBatchRequest seal;
  *seal.add_items() = SealItem("default", "one", "a");
  *seal.add_items() = SealItem("nope", "x");
  *seal.add_items() = SealItem("bad/name", "x");
  *seal.add_items() = SealItem("default", "x", std::string(64 * 1024 + 1, 'a'));
  *seal.add_items() = SealItem("default", "x");
  seal.mutable_items(4)->mutable_plaintext_crc32c()->set_value(Crc32c("y"));
  *seal.add_items() = SealItem("default", "two");
  v1::SealBatchResponse sealed;
  grpc::Status status = crypto_->SealBatch(As("alpha").get(), seal, &sealed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(sealed.results_size(), 6);
  ASSERT_TRUE(sealed.results(0).has_sealed());
  EXPECT_EQ(sealed.results(0).sealed().key_version(), 2u);
  EXPECT_EQ(sealed.results(1).error().code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(sealed.results(2).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(sealed.results(3).error().message(), HasSubstr("associated data"));
  EXPECT_THAT(sealed.results(4).error().message(), HasSubstr("checksum mismatch"));
  ASSERT_TRUE(sealed.results(5).has_sealed());

  const std::string one = sealed.results(0).sealed().ciphertext();
  std::string tampered = one;
  tampered[40] ^= 1;
  v1::OpenBatchRequest open;
  *open.add_items() = OpenItem("default", one, "a");
  *open.add_items() = OpenItem("default", tampered, "a");
  *open.add_items() = OpenItem("default", one, "b");
  *open.add_items() = OpenItem("nope", one, "a");
  *open.add_items() = OpenItem("default", old.ciphertext());
  *open.add_items() = OpenItem("default", sealed.results(5).sealed().ciphertext());
  v1::OpenBatchResponse opened;
  status = crypto_->OpenBatch(As("alpha").get(), open, &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(opened.results_size(), 6);
  EXPECT_EQ(opened.results(0).opened().plaintext(), "one");
  EXPECT_EQ(opened.results(0).opened().plaintext_crc32c(), Crc32c("one"));
  for (int i : {1, 2}) {  // a changed byte and the wrong AAD fail alike
    EXPECT_EQ(opened.results(i).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(opened.results(i).error().message(), "decryption failed");
    EXPECT_EQ(opened.results(i).error().reason(), v1::DECRYPTION_FAILED);
  }
  EXPECT_EQ(opened.results(3).error().code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(opened.results(3).error().reason(), v1::ERROR_REASON_UNSPECIFIED);
  EXPECT_EQ(opened.results(4).error().code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(opened.results(5).opened().plaintext(), "two");
  // Each failed item counts against its key, as a unary Open does.
  EXPECT_EQ(Metric("sealbox_decryption_failures_total"), "sealbox_decryption_failures_total 2");

  Rotate();
  v1::RewrapBatchRequest rewrap;
  v1::RewrapRequest* item = rewrap.add_items();
  item->set_key("default");
  item->set_ciphertext(one);
  item->set_associated_data("a");
  *rewrap.add_items() = *item;
  rewrap.mutable_items(1)->set_ciphertext(tampered);
  v1::RewrapBatchResponse rewrapped;
  status = crypto_->RewrapBatch(As("alpha").get(), rewrap, &rewrapped);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(rewrapped.results_size(), 2);
  EXPECT_EQ(rewrapped.results(0).rewrapped().key_version(), 3u);
  EXPECT_EQ(rewrapped.results(0).rewrapped().previous_key_version(), 2u);
  EXPECT_EQ(rewrapped.results(1).error().reason(), v1::DECRYPTION_FAILED);
  v1::OpenResponse reopened;
  ASSERT_TRUE(
      Open("alpha", "default", rewrapped.results(0).rewrapped().ciphertext(), "a", &reopened).ok());
  EXPECT_EQ(reopened.plaintext(), "one");
  // A batch answers for the caller's own tenant only.
  v1::OpenBatchResponse as_beta;
  ASSERT_TRUE(crypto_->OpenBatch(As("beta").get(), open, &as_beta).ok());
  EXPECT_EQ(as_beta.results(0).error().message(), "decryption failed");
}

TEST_F(DataPlaneCallsTest, MalformedBatchesFailAsAWhole) {
  v1::SealBatchRequest empty;
  v1::SealBatchResponse response;
  EXPECT_EQ(crypto_->SealBatch(As("alpha").get(), empty, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  v1::SealBatchRequest too_many;
  for (int i = 0; i < 1001; ++i) *too_many.add_items() = SealItem("default", "x");
  const grpc::Status many = crypto_->SealBatch(As("alpha").get(), too_many, &response);
  EXPECT_EQ(many.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(many.error_message(), HasSubstr("1 to 1000 items"));
  too_many.mutable_items()->RemoveLast();
  EXPECT_TRUE(crypto_->SealBatch(As("alpha").get(), too_many, &response).ok());
  EXPECT_EQ(response.results_size(), 1000);
  // The fixture's --max-unary-bytes is 64 KiB: two 40 KiB items are over it.
  v1::SealBatchRequest too_big;
  *too_big.add_items() = SealItem("default", std::string(40 * 1024, 'x'));
  *too_big.add_items() = SealItem("default", std::string(40 * 1024, 'x'));
  const grpc::Status big = crypto_->SealBatch(As("alpha").get(), too_big, &response);
  EXPECT_EQ(big.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(big.error_message(), HasSubstr("--max-unary-bytes"));
  // Authentication first, as for every call.
  grpc::ClientContext anonymous;
  EXPECT_EQ(crypto_->SealBatch(&anonymous, too_big, &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

// A key missing from this replica's keystore, or a ciphertext naming a version newer
// than any it knows, makes a call wait for the store once (it may have been made
// through another replica a moment ago). A batch waits at most once for all its
// items: 1,000 items naming unknown keys or versions must not wait 1,000 times.
TEST_F(DataPlaneCallsTest, ABatchWaitsForTheStoreAtMostOnce) {
  v1::SealResponse sealed;
  ASSERT_TRUE(Seal("alpha", "default", "x", "", &sealed).ok());
  std::string future = sealed.ciphertext();
  future[4] = 9;  // the header's version (big-endian u32 at bytes 1-4): 9, unknown
  v1::SealBatchRequest seal;
  v1::OpenBatchRequest open;
  for (int i = 0; i < 1000; ++i) {
    *seal.add_items() = SealItem("missing-" + std::to_string(i), "x");
    *open.add_items() = OpenItem("default", future);
  }
  const absl::Time start = absl::Now();
  v1::SealBatchResponse sealed_batch;
  ASSERT_TRUE(crypto_->SealBatch(As("alpha").get(), seal, &sealed_batch).ok());
  v1::OpenBatchResponse opened_batch;
  ASSERT_TRUE(crypto_->OpenBatch(As("alpha").get(), open, &opened_batch).ok());
  // Waiting per item would take 1,000 x 25 ms and more, per call.
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(sealed_batch.results(999).error().code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(opened_batch.results(999).error().reason(), v1::DECRYPTION_FAILED);
}

TEST_F(DataPlaneCallsTest, DataKeysOpenWithOpenAndFollowRotationsThroughRewrap) {
  v1::GenerateDataKeyRequest request;
  request.set_key("default");
  request.set_associated_data("bucket/object-1");
  request.set_include_plaintext(true);
  v1::GenerateDataKeyResponse first, second;
  ASSERT_TRUE(crypto_->GenerateDataKey(As("alpha").get(), request, &first).ok());
  ASSERT_TRUE(crypto_->GenerateDataKey(As("alpha").get(), request, &second).ok());
  ASSERT_EQ(first.plaintext().size(), 32u);
  EXPECT_NE(first.plaintext(), second.plaintext());
  EXPECT_EQ(first.plaintext_crc32c(), Crc32c(first.plaintext()));
  EXPECT_EQ(first.ciphertext_crc32c(), Crc32c(first.ciphertext()));
  EXPECT_EQ(first.key_version(), 1u);
  EXPECT_EQ(first.ciphertext().size(), 32u + 49u);  // a unary ciphertext of the key

  v1::OpenResponse opened;
  ASSERT_TRUE(Open("alpha", "default", first.ciphertext(), "bucket/object-1", &opened).ok());
  EXPECT_EQ(opened.plaintext(), first.plaintext());
  EXPECT_EQ(
      Open("alpha", "default", first.ciphertext(), "bucket/object-2", &opened).error_message(),
      "decryption failed");

  Rotate();
  v1::RewrapResponse rewrapped;
  ASSERT_TRUE(Rewrap("alpha", "default", first.ciphertext(), "bucket/object-1", &rewrapped).ok());
  EXPECT_EQ(rewrapped.key_version(), 2u);
  ASSERT_TRUE(Open("alpha", "default", rewrapped.ciphertext(), "bucket/object-1", &opened).ok());
  EXPECT_EQ(opened.plaintext(), first.plaintext());

  // Sealed only: no plaintext comes back, and the sealed key still opens.
  request.set_include_plaintext(false);
  request.set_data_key_bytes(16);
  v1::GenerateDataKeyResponse sealed_only;
  ASSERT_TRUE(crypto_->GenerateDataKey(As("alpha").get(), request, &sealed_only).ok());
  EXPECT_TRUE(sealed_only.plaintext().empty());
  EXPECT_EQ(sealed_only.plaintext_crc32c(), 0u);
  EXPECT_EQ(sealed_only.key_version(), 2u);
  ASSERT_TRUE(Open("alpha", "default", sealed_only.ciphertext(), "bucket/object-1", &opened).ok());
  EXPECT_EQ(opened.plaintext().size(), 16u);

  request.set_data_key_bytes(24);
  const grpc::Status odd = crypto_->GenerateDataKey(As("alpha").get(), request, &first);
  EXPECT_EQ(odd.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(odd.error_message(), HasSubstr("16 or 32"));
  request.set_data_key_bytes(0);
  request.set_key("nope");
  EXPECT_EQ(crypto_->GenerateDataKey(As("alpha").get(), request, &first).error_code(),
            grpc::StatusCode::NOT_FOUND);
  request.set_key("default");
  request.mutable_associated_data_crc32c()->set_value(Crc32c("bucket/object-2"));
  EXPECT_THAT(crypto_->GenerateDataKey(As("alpha").get(), request, &first).error_message(),
              HasSubstr("checksum mismatch"));
}

}  // namespace
}  // namespace sealbox::server
