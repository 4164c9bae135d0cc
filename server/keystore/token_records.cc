#include "server/keystore/token_records.h"

namespace sealbox::server {

absl::Time StoredDeadline(int64_t unix_seconds) {
  return unix_seconds == 0 ? absl::InfiniteFuture() : absl::FromUnixSeconds(unix_seconds);
}

TokenInfo TokenInfoOf(const internal::Token& token) {
  TokenInfo info;
  info.id = token.id();
  info.description = token.description();
  info.create_time = absl::FromUnixSeconds(token.create_time_unix());
  info.expire_time = StoredDeadline(token.expire_time_unix());
  info.max_expire_time = StoredDeadline(token.max_expire_time_unix());
  for (int operation : token.operations()) {
    info.scope.operations.push_back(static_cast<Operation>(operation));
  }
  info.scope.keys.assign(token.key_patterns().begin(), token.key_patterns().end());
  info.renewed_from = token.renewed_from();
  info.read_only = token.read_only();
  return info;
}

}  // namespace sealbox::server
