// The CRC32C checksums of the data plane's requests and responses (data.proto,
// "Checksums"): what a request gave is checked before any work, what a response
// carries is computed from the bytes it sends.
#ifndef SEALBOX_SERVER_CRYPTO_CHECKSUMS_H_
#define SEALBOX_SERVER_CRYPTO_CHECKSUMS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace sealbox::server {

// OK when the request gave no checksum for `bytes` (`given` false) or the one it
// gave matches; else INVALID_ARGUMENT "checksum mismatch: <field> ...".
absl::Status CheckCrc32c(bool given, uint32_t crc32c, const std::string& bytes,
                         const char* field);

// The CRC32C of a protobuf bytes field.
uint32_t Crc32cOf(const std::string& bytes);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_CRYPTO_CHECKSUMS_H_
