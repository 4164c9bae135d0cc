#include "client/checksums.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/crc32c/crc32c.h"

namespace sealbox::client {

void SetCrc32c(absl::string_view bytes, google::protobuf::UInt32Value& field) {
  field.set_value(crypto::Crc32c(bytes));
}

absl::Status CheckAnswer(absl::string_view what, const AnswerChecksums& answer,
                         absl::string_view output) {
  // A server that ignored the checksums (one older than them) says so by leaving the
  // flags false; the bytes it worked on are then unconfirmed.
  if (!answer.verified_input || !answer.verified_associated_data) {
    return absl::DataLossError(absl::StrCat(
        what, ": the server did not confirm the request's CRC32C checksums (a server "
              "older than this client?); nothing was written"));
  }
  const uint32_t crc = crypto::Crc32c(output);
  if (crc != answer.output_crc32c) {
    return absl::DataLossError(absl::StrFormat(
        "%s: the answer was corrupted in transit (CRC32C 0x%08x, expected 0x%08x); "
        "nothing was written",
        what, crc, answer.output_crc32c));
  }
  return absl::OkStatus();
}

}  // namespace sealbox::client
