// The CRC32C checksums a data-plane request may give (data.proto, "Checksums"),
// checked before any work. Responses compute theirs with crypto::Crc32c.
#ifndef SEALBOX_SERVER_DATAPLANE_CHECKSUMS_H_
#define SEALBOX_SERVER_DATAPLANE_CHECKSUMS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace sealbox::server {

// OK when the request gave no checksum for `bytes` (`given` false) or the one it
// gave matches; else INVALID_ARGUMENT "checksum mismatch: <field> ...".
absl::Status CheckCrc32c(bool given, uint32_t crc32c, const std::string& bytes, const char* field);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_CHECKSUMS_H_
