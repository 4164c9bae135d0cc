#include "client/cli/checksums.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/crc32c/crc32c.h"

namespace sealbox::client {

void SetCrc32c(absl::string_view bytes, google::protobuf::UInt32Value& field) {
  field.set_value(crypto::Crc32c(bytes));
}

namespace {

// What an answer says about the request's checksums and its own output.
struct AnswerChecksums {
  bool verified_input = false;
  bool verified_associated_data = false;
  uint32_t output_crc32c = 0;
};

absl::Status Check(absl::string_view what, const AnswerChecksums& answer,
                   absl::string_view output) {
  // A server that ignored the checksums (one older than them) says so by leaving the
  // flags false; the bytes it worked on are then unconfirmed.
  if (!answer.verified_input || !answer.verified_associated_data) {
    return absl::DataLossError(
        absl::StrCat(what,
                     ": the server did not confirm the request's CRC32C checksums (a server "
                     "older than this client?); nothing was written"));
  }
  const uint32_t crc = crypto::Crc32c(output);
  if (crc != answer.output_crc32c) {
    return absl::DataLossError(
        absl::StrFormat("%s: the answer was corrupted in transit (CRC32C 0x%08x, expected 0x%08x); "
                        "nothing was written",
                        what, crc, answer.output_crc32c));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckAnswer(absl::string_view what, const v1::SealResponse& answer) {
  return Check(what,
               {answer.verified_plaintext_crc32c(), answer.verified_associated_data_crc32c(),
                answer.ciphertext_crc32c()},
               answer.ciphertext());
}

absl::Status CheckAnswer(absl::string_view what, const v1::OpenResponse& answer) {
  return Check(what,
               {answer.verified_ciphertext_crc32c(), answer.verified_associated_data_crc32c(),
                answer.plaintext_crc32c()},
               answer.plaintext());
}

absl::Status CheckAnswer(absl::string_view what, const v1::RewrapResponse& answer) {
  return Check(what,
               {answer.verified_ciphertext_crc32c(), answer.verified_associated_data_crc32c(),
                answer.ciphertext_crc32c()},
               answer.ciphertext());
}

absl::Status CheckAnswer(absl::string_view what, const v1::GenerateDataKeyResponse& answer) {
  // The request's only checksum is its AAD's.
  const bool verified = answer.verified_associated_data_crc32c();
  absl::Status checked =
      Check(what, {verified, verified, answer.ciphertext_crc32c()}, answer.ciphertext());
  if (!checked.ok()) return checked;
  return Check(what, {verified, verified, answer.plaintext_crc32c()}, answer.plaintext());
}

}  // namespace sealbox::client
