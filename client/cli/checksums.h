// CRC32C on the CLI's unary calls (docs/FORMAT.md "Checksums"), as Cloud KMS
// clients do: every request carries the CRC32C of its payload and associated data,
// and every answer must say the server checked them and carry a CRC32C that matches
// its output. Corruption between this process and the server is then an error, never
// a ciphertext of the wrong bytes or a wrong plaintext written out.
#ifndef SEALBOX_CLIENT_CLI_CHECKSUMS_H_
#define SEALBOX_CLIENT_CLI_CHECKSUMS_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/wrappers.pb.h"
#include "sealbox/v1/data.pb.h"

namespace sealbox::client {

// Sets `field` to the CRC32C of `bytes`.
void SetCrc32c(absl::string_view bytes, google::protobuf::UInt32Value& field);

// Fills an Open or Rewrap request (they share their fields) and its checksums.
template <typename Request>
void FillCiphertextRequest(std::string key, std::string ciphertext, std::string aad,
                           Request& request) {
  request.set_key(std::move(key));
  request.set_ciphertext(std::move(ciphertext));
  request.set_associated_data(std::move(aad));
  SetCrc32c(request.ciphertext(), *request.mutable_ciphertext_crc32c());
  SetCrc32c(request.associated_data(), *request.mutable_associated_data_crc32c());
}

// OK if the server verified the request's checksums and the answer's output matches
// its CRC32C; DATA_LOSS saying which check failed otherwise. `what` names the command.
absl::Status CheckAnswer(absl::string_view what, const v1::SealResponse& answer);
absl::Status CheckAnswer(absl::string_view what, const v1::OpenResponse& answer);
absl::Status CheckAnswer(absl::string_view what, const v1::RewrapResponse& answer);
// Both the sealed key and, when asked for, the raw one (an empty one has CRC32C 0).
absl::Status CheckAnswer(absl::string_view what, const v1::GenerateDataKeyResponse& answer);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_CHECKSUMS_H_
