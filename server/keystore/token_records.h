// Token records as the keystore stores them (a token's SHA-256, id, scope and
// deadlines; never the token): what a record says of itself. The token format is
// auth's (server/auth/tokens.h).
#ifndef SEALBOX_SERVER_KEYSTORE_TOKEN_RECORDS_H_
#define SEALBOX_SERVER_KEYSTORE_TOKEN_RECORDS_H_

#include <cstdint>

#include "absl/time/time.h"
#include "sealbox/internal/keystore_file.pb.h"
#include "server/keystore/info.h"

namespace sealbox::server {

// What a stored token says of itself (never its hash).
TokenInfo TokenInfoOf(const internal::Token& token);

// A unix time as stored, 0 meaning never, as an absl::Time (InfiniteFuture for 0).
absl::Time StoredDeadline(int64_t unix_seconds);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_TOKEN_RECORDS_H_
