// Protobuf `bytes` fields are std::string, fixed inputs (associated data) are
// string literals; the engine speaks byte spans.
#ifndef SEALBOX_SERVER_RPC_BYTES_H_
#define SEALBOX_SERVER_RPC_BYTES_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace sealbox::server {

inline absl::Span<const uint8_t> AsBytes(absl::string_view s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_RPC_BYTES_H_
