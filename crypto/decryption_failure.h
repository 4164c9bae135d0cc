// The one error every failed decryption gets, whatever went wrong: a bad tag, a
// malformed or truncated ciphertext, an unknown key version. Callers must not be
// able to tell these apart, so there is one status, made here and nowhere else.
//
// It is recognized by its code and payload, never by its text.
#ifndef SEALBOX_CRYPTO_DECRYPTION_FAILURE_H_
#define SEALBOX_CRYPTO_DECRYPTION_FAILURE_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sealbox::crypto {

// The payload DecryptionFailedError() carries (its value is empty).
inline constexpr absl::string_view kDecryptionFailedTypeUrl =
    "type.googleapis.com/sealbox.DecryptionFailed";

// INVALID_ARGUMENT "decryption failed", with the payload above.
absl::Status DecryptionFailedError();

// True for a status made by DecryptionFailedError() (or a copy of one).
bool IsDecryptionFailure(const absl::Status& status);

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_DECRYPTION_FAILURE_H_
