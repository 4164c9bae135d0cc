#include "server/dataplane/checksums.h"

#include "absl/strings/str_cat.h"
#include "crypto/crc32c/crc32c.h"

namespace sealbox::server {

absl::Status CheckCrc32c(bool given, uint32_t crc32c, const std::string& bytes, const char* field) {
  if (!given || crypto::Crc32c(bytes) == crc32c) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("checksum mismatch: ", field,
                   " does not match the bytes received (corrupted on the way?); nothing was done"));
}

}  // namespace sealbox::server
