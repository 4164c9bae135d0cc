#include "server/keystore/tokens.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace sealbox::server {

absl::StatusOr<NewToken> GenerateToken() {
  uint8_t secret[32], id[8];
  if (RAND_bytes(secret, sizeof(secret)) != 1 || RAND_bytes(id, sizeof(id)) != 1) {
    return absl::InternalError("RAND_bytes failed");
  }
  NewToken out;
  out.token =
      absl::StrCat("sbx_", absl::WebSafeBase64Escape(absl::string_view(
                               reinterpret_cast<const char*>(secret), sizeof(secret))));
  out.id = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(id), sizeof(id)));
  out.sha256 = TokenSha256(out.token);
  OPENSSL_cleanse(secret, sizeof(secret));
  return out;
}

std::string TokenSha256(absl::string_view token) {
  std::string digest(SHA256_DIGEST_LENGTH, '\0');
  EVP_Digest(token.data(), token.size(), reinterpret_cast<uint8_t*>(digest.data()),
             nullptr, EVP_sha256(), nullptr);
  return digest;
}

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
