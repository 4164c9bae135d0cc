// Bearer tokens (tenant and admin): "sbx_" + 32 random bytes in unpadded base64url.
// The keystore keeps only their SHA-256 and a random id (8 bytes, hex) to revoke them
// by (server/keystore/token_records.h).
#ifndef SEALBOX_SERVER_AUTH_TOKENS_H_
#define SEALBOX_SERVER_AUTH_TOKENS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sealbox::server {

struct NewToken {
  std::string token;   // shown to the caller once
  std::string id;      // 16 hex digits
  std::string sha256;  // 32 bytes, what the keystore stores
};

absl::StatusOr<NewToken> GenerateToken();

// SHA-256 of a token, 32 raw bytes.
std::string TokenSha256(absl::string_view token);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_AUTH_TOKENS_H_
