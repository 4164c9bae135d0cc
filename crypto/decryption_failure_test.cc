#include "crypto/decryption_failure.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

TEST(DecryptionFailureTest, KeepsTheTextTestsAndDocsRelyOn) {
  const absl::Status status = DecryptionFailedError();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "decryption failed");
  EXPECT_TRUE(IsDecryptionFailure(status));
}

TEST(DecryptionFailureTest, SurvivesCopiesAndStatusOr) {
  const absl::StatusOr<int> result = DecryptionFailedError();
  const absl::Status copy = result.status();
  EXPECT_TRUE(IsDecryptionFailure(copy));
}

TEST(DecryptionFailureTest, RecognizedByPayloadNotByText) {
  // The same words made elsewhere are not the uniform failure.
  EXPECT_FALSE(IsDecryptionFailure(absl::InvalidArgumentError("decryption failed")));
  // Nor is the payload under another code.
  absl::Status other = absl::InternalError("decryption failed");
  other.SetPayload(kDecryptionFailedTypeUrl, absl::Cord());
  EXPECT_FALSE(IsDecryptionFailure(other));
  EXPECT_FALSE(IsDecryptionFailure(absl::OkStatus()));
}

}  // namespace
}  // namespace sealbox::crypto
