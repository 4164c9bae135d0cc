#include "crypto/decryption_failure.h"

#include "absl/strings/cord.h"

namespace sealbox::crypto {

absl::Status DecryptionFailedError() {
  absl::Status status = absl::InvalidArgumentError("decryption failed");
  status.SetPayload(kDecryptionFailedTypeUrl, absl::Cord());
  return status;
}

bool IsDecryptionFailure(const absl::Status& status) {
  return status.code() == absl::StatusCode::kInvalidArgument &&
         status.GetPayload(kDecryptionFailedTypeUrl).has_value();
}

}  // namespace sealbox::crypto
