#include "server/auth/tokens.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

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
  out.token = absl::StrCat("sbx_", absl::WebSafeBase64Escape(absl::string_view(
                                       reinterpret_cast<const char*>(secret), sizeof(secret))));
  out.id = absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(id), sizeof(id)));
  out.sha256 = TokenSha256(out.token);
  OPENSSL_cleanse(secret, sizeof(secret));
  return out;
}

namespace {

// SHA-256 fetched once. EVP_sha256() makes OpenSSL 3 look the algorithm up in its
// provider store on every use (a shared lock, a name lookup), and a fresh context
// per digest allocates and takes a reference on the algorithm (an atomic every thread
// writes). With one context per thread, reused, a token's digest costs what the hash
// does (tokens_bench; docs/PERFORMANCE.md, "Token checks without a lookup per
// call"). The token does not stay in the context:
// SHA-256's final step wipes its input block (OPENSSL_cleanse, in the profile too).
class Sha256Context {
 public:
  Sha256Context() : md_(Fetch()), ctx_(EVP_MD_CTX_new()) {}
  ~Sha256Context() { EVP_MD_CTX_free(ctx_); }
  Sha256Context(const Sha256Context&) = delete;
  Sha256Context& operator=(const Sha256Context&) = delete;

  bool Digest(absl::string_view data, uint8_t* out) {
    return ctx_ != nullptr && EVP_DigestInit_ex(ctx_, md_, nullptr) == 1 &&
           EVP_DigestUpdate(ctx_, data.data(), data.size()) == 1 &&
           EVP_DigestFinal_ex(ctx_, out, nullptr) == 1;
  }

 private:
  static const EVP_MD* Fetch() {
    static const EVP_MD* const md = [] {
      const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
      return fetched != nullptr ? fetched : EVP_sha256();
    }();
    return md;
  }

  const EVP_MD* const md_;
  EVP_MD_CTX* const ctx_;
};

}  // namespace

std::string TokenSha256(absl::string_view token) {
  thread_local Sha256Context context;
  std::string digest(SHA256_DIGEST_LENGTH, '\0');
  if (!context.Digest(token, reinterpret_cast<uint8_t*>(digest.data()))) {
    // Never seen; a token must not be looked up by a digest that was not computed.
    std::fprintf(stderr, "TokenSha256: SHA-256 failed\n");
    std::abort();
  }
  return digest;
}

}  // namespace sealbox::server
