// A token's scope, compiled for the check every data-plane call makes: which
// operations and which key names the token may use.
#ifndef SEALBOX_SERVER_AUTH_TOKEN_ACCESS_H_
#define SEALBOX_SERVER_AUTH_TOKEN_ACCESS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/keystore/info.h"

namespace sealbox::server {

// A scope holds at most this many key patterns.
inline constexpr size_t kMaxTokenKeyPatterns = 32;

class TokenAccess {
 public:
  // Everything: what a token without a scope, or a client certificate, may do.
  TokenAccess() = default;

  // INVALID_ARGUMENT for an operation the server does not know, a repeated one, more
  // than kMaxTokenKeyPatterns patterns, or a pattern that is neither a key name nor
  // a key-name prefix followed by one `*` ("orders-*"; "*" alone is every key).
  static absl::StatusOr<TokenAccess> Create(const TokenScope& scope);

  // OK when the token may do `operation` on `key` (a valid key name); else
  // PERMISSION_DENIED saying what it lacks and what it has, e.g. 'this token lacks
  // the open permission (it has: seal)' or 'this token lacks permission for key
  // "payments" (its keys: orders-*)'.
  absl::Status Check(Operation operation, absl::string_view key) const;

  // "seal", "open", "rewrap", "datakey": how the CLI and messages name operations.
  static absl::string_view Name(Operation operation);
  // The inverse of Name: INVALID_ARGUMENT for anything else.
  static absl::StatusOr<Operation> FromName(absl::string_view name);

 private:
  bool AllowsKey(absl::string_view key) const;

  uint32_t operations_ = 0;            // a bit per Operation; 0: every one
  std::vector<std::string> names_;     // exact key names
  std::vector<std::string> prefixes_;  // from "prefix*"
  bool every_key_ = true;
  std::string operations_text_;  // for messages: "seal, open"
  std::string keys_text_;        // "orders-*, invoices"
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_AUTH_TOKEN_ACCESS_H_
