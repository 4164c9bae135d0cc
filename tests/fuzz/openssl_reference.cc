#include "tests/fuzz/openssl_reference.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <memory>

namespace sealbox::fuzz {
namespace {

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using Ctx = std::unique_ptr<EVP_CIPHER_CTX, CtxFree>;

const EVP_CIPHER* Gcm(size_t key_bytes) {
  switch (key_bytes) {
    case 16:
      return EVP_aes_128_gcm();
    case 24:
      return EVP_aes_192_gcm();
    case 32:
      return EVP_aes_256_gcm();
    default:
      return nullptr;
  }
}

// A context keyed for `encrypt`ing or decrypting, with the IV and AAD absorbed.
Ctx Start(bool encrypt, absl::Span<const uint8_t> key, absl::Span<const uint8_t> iv,
          absl::Span<const uint8_t> aad) {
  Ctx ctx(EVP_CIPHER_CTX_new());
  const EVP_CIPHER* cipher = Gcm(key.size());
  int unused = 0;
  if (ctx == nullptr || cipher == nullptr ||
      EVP_CipherInit_ex(ctx.get(), cipher, nullptr, nullptr, nullptr, encrypt) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()),
                          nullptr) != 1 ||
      EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, key.data(), iv.data(), encrypt) != 1 ||
      (!aad.empty() && EVP_CipherUpdate(ctx.get(), nullptr, &unused, aad.data(),
                                        static_cast<int>(aad.size())) != 1)) {
    return nullptr;
  }
  return ctx;
}

// Runs `in` through the cipher into `out`, sized to match.
bool Crypt(EVP_CIPHER_CTX* ctx, absl::Span<const uint8_t> in, std::vector<uint8_t>* out) {
  out->assign(in.size(), 0);
  int written = 0;
  return in.empty() || (EVP_CipherUpdate(ctx, out->data(), &written, in.data(),
                                         static_cast<int>(in.size())) == 1 &&
                        static_cast<size_t>(written) == in.size());
}

}  // namespace

bool OpenSslSeal(absl::Span<const uint8_t> key, absl::Span<const uint8_t> iv,
                 absl::Span<const uint8_t> aad, absl::Span<const uint8_t> plaintext,
                 size_t tag_bytes, std::vector<uint8_t>* ciphertext, std::vector<uint8_t>* tag) {
  Ctx ctx = Start(/*encrypt=*/true, key, iv, aad);
  uint8_t final_block[16];
  int unused = 0;
  tag->assign(tag_bytes, 0);
  const bool ok = ctx != nullptr && Crypt(ctx.get(), plaintext, ciphertext) &&
                  EVP_CipherFinal_ex(ctx.get(), final_block, &unused) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_bytes),
                                      tag->data()) == 1;
  ERR_clear_error();
  return ok;
}

bool OpenSslOpen(absl::Span<const uint8_t> key, absl::Span<const uint8_t> iv,
                 absl::Span<const uint8_t> aad, absl::Span<const uint8_t> ciphertext,
                 absl::Span<const uint8_t> tag, std::vector<uint8_t>* plaintext) {
  Ctx ctx = Start(/*encrypt=*/false, key, iv, aad);
  std::vector<uint8_t> tag_copy(tag.begin(), tag.end());  // SET_TAG wants non-const
  uint8_t final_block[16];
  int unused = 0;
  const bool ok = ctx != nullptr && Crypt(ctx.get(), ciphertext, plaintext) &&
                  EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG,
                                      static_cast<int>(tag_copy.size()), tag_copy.data()) == 1 &&
                  EVP_CipherFinal_ex(ctx.get(), final_block, &unused) == 1;
  ERR_clear_error();
  return ok;
}

}  // namespace sealbox::fuzz
