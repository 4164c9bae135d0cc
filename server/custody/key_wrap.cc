#include "server/custody/key_wrap.h"

#include <openssl/crypto.h>
#include <openssl/decoder.h>
#include <openssl/encoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sealbox::server::custody {
namespace {

constexpr size_t kAesKeyBytes = 32;  // the one-time key is AES-256
// RFC 5649's output is whole 8-byte blocks: the integrity block and at least one more.
constexpr size_t kKwpBlockBytes = 8;
constexpr size_t kMinKwpBytes = 2 * kKwpBlockBytes;
constexpr size_t kMaxKwpBytes = kMaxKeyMaterialBytes + kKwpBlockBytes;
constexpr size_t kMaxPublicKeyBytes = 64 * 1024;

constexpr absl::string_view kDoesNotDecrypt =
    "the wrapped key material does not decrypt under this import key: wrapped for another "
    "key, or with other OAEP parameters (SHA-256, MGF1-SHA-256, empty label)";
constexpr absl::string_view kDoesNotUnwrap =
    "the key material does not unwrap: altered, or wrapped under another AES key";

struct OpenSslFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
  void operator()(EVP_CIPHER_CTX* p) const { EVP_CIPHER_CTX_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(OSSL_DECODER_CTX* p) const { OSSL_DECODER_CTX_free(p); }
  void operator()(OSSL_ENCODER_CTX* p) const { OSSL_ENCODER_CTX_free(p); }
};
template <typename T>
using OpenSslPtr = std::unique_ptr<T, OpenSslFree>;

// A failure inside OpenSSL that no input explains (out of memory, a missing algorithm).
// The error queue is emptied so that it cannot surface in a later, unrelated call.
absl::Status OpenSslFailure(absl::string_view doing) {
  char reason[256] = "no reason given";
  if (unsigned long e = ERR_peek_last_error(); e != 0) {
    ERR_error_string_n(e, reason, sizeof(reason));
  }
  ERR_clear_error();
  return absl::InternalError(absl::StrCat("OpenSSL failed to ", doing, ": ", reason));
}

// INVALID_ARGUMENT unless `bits` is a size this format takes; `what` names the key.
absl::Status CheckBits(absl::string_view what, int bits) {
  if (bits >= ImportKeyPair::kMinBits && bits <= ImportKeyPair::kMaxBits) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " is RSA-", bits, "; import keys are RSA-",
                                                 ImportKeyPair::kMinBits, " to RSA-",
                                                 ImportKeyPair::kMaxBits));
}

const uint8_t* Bytes(absl::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// RSA-OAEP as CKM_RSA_AES_KEY_WRAP is used by the KMS services: SHA-256 for both the
// hash and MGF1; the label stays empty.
bool SetOaepSha256(EVP_PKEY_CTX* ctx) {
  return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0 &&
         EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) > 0 &&
         EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) > 0;
}

// A public key as a sender is given it: SubjectPublicKeyInfo in PEM or DER, RSA.
absl::StatusOr<OpenSslPtr<EVP_PKEY>> ParsePublicKey(absl::string_view public_key) {
  const absl::Status not_spki = absl::InvalidArgumentError(
      "the public key is not a SubjectPublicKeyInfo in PEM (\"-----BEGIN PUBLIC KEY-----\") or "
      "DER");
  if (public_key.size() > kMaxPublicKeyBytes) return not_spki;
  OpenSslPtr<EVP_PKEY> key;
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(public_key), "-----BEGIN")) {
    OpenSslPtr<BIO> bio(BIO_new_mem_buf(public_key.data(), static_cast<int>(public_key.size())));
    if (bio == nullptr) return OpenSslFailure("read the public key");
    key.reset(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  } else {
    const unsigned char* p = Bytes(public_key);
    key.reset(d2i_PUBKEY(nullptr, &p, static_cast<long>(public_key.size())));
    if (p != Bytes(public_key) + public_key.size()) key.reset();  // trailing bytes
  }
  if (key == nullptr) {
    ERR_clear_error();
    return not_spki;
  }
  if (!EVP_PKEY_is_a(key.get(), "RSA")) {
    return absl::InvalidArgumentError("the public key is not an RSA key");
  }
  if (absl::Status s = CheckBits("the public key", EVP_PKEY_get_bits(key.get())); !s.ok()) {
    return s;
  }
  return key;
}

const EVP_CIPHER* KeyWrapPadCipher(size_t kek_bytes) {
  switch (kek_bytes) {
    case 16:
      return EVP_aes_128_wrap_pad();
    case 24:
      return EVP_aes_192_wrap_pad();
    case 32:
      return EVP_aes_256_wrap_pad();
    default:
      return nullptr;
  }
}

// One RFC 5649 pass over `in` into `out`, which has room for all of it: the bytes written.
// Unwrapping that fails the integrity check is INVALID_ARGUMENT.
absl::StatusOr<size_t> RunKeyWrapPad(bool wrap, absl::Span<const uint8_t> kek,
                                     absl::Span<const uint8_t> in, absl::Span<uint8_t> out) {
  const EVP_CIPHER* cipher = KeyWrapPadCipher(kek.size());
  if (cipher == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("an AES key wrap key is 16, 24 or 32 bytes, not ", kek.size()));
  }
  OpenSslPtr<EVP_CIPHER_CTX> ctx(EVP_CIPHER_CTX_new());
  if (ctx == nullptr) return OpenSslFailure("allocate a cipher context");
  // Wrap modes must be asked for: they take the whole input in one call, not a stream.
  EVP_CIPHER_CTX_set_flags(ctx.get(), EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
  // No IV: RFC 5649's alternative initial value, A65959A6, as `openssl enc -iv` gives it.
  if (EVP_CipherInit_ex(ctx.get(), cipher, nullptr, kek.data(), nullptr, wrap ? 1 : 0) != 1) {
    return OpenSslFailure("set up AES key wrap");
  }
  int len = 0;
  int final_len = 0;
  if (EVP_CipherUpdate(ctx.get(), out.data(), &len, in.data(), static_cast<int>(in.size())) != 1 ||
      EVP_CipherFinal_ex(ctx.get(), out.data() + len, &final_len) != 1) {
    if (wrap) return OpenSslFailure("wrap the key material");
    ERR_clear_error();
    return absl::InvalidArgumentError(kDoesNotUnwrap);
  }
  const size_t written = static_cast<size_t>(len) + static_cast<size_t>(final_len);
  if (written > out.size()) return absl::InternalError("AES key wrap wrote past its buffer");
  return written;
}

}  // namespace

void ImportKeyPair::EvpPkeyFree::operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }

absl::StatusOr<ImportKeyPair> ImportKeyPair::Generate(int bits) {
  if (absl::Status s = CheckBits("the requested import key", bits); !s.ok()) return s;
  OpenSslPtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
  if (ctx == nullptr || EVP_PKEY_keygen_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), bits) <= 0) {
    return OpenSslFailure("set up RSA key generation");
  }
  EVP_PKEY* key = nullptr;
  if (EVP_PKEY_keygen(ctx.get(), &key) <= 0) return OpenSslFailure("generate an RSA key");
  return FromKey(KeyPtr(key));
}

absl::StatusOr<ImportKeyPair> ImportKeyPair::FromPrivateKeyDer(absl::Span<const uint8_t> der) {
  EVP_PKEY* decoded = nullptr;
  // Unencrypted PKCS#8 (PrivateKeyInfo) of an RSA key, and nothing else.
  OpenSslPtr<OSSL_DECODER_CTX> decoder(OSSL_DECODER_CTX_new_for_pkey(
      &decoded, "DER", "PrivateKeyInfo", "RSA", EVP_PKEY_KEYPAIR, nullptr, nullptr));
  if (decoder == nullptr) return OpenSslFailure("set up a PKCS#8 decoder");
  const unsigned char* p = der.data();
  size_t left = der.size();
  const bool decoded_ok = OSSL_DECODER_from_data(decoder.get(), &p, &left) == 1;
  KeyPtr key(decoded);
  if (!decoded_ok || key == nullptr || left != 0) {
    ERR_clear_error();
    return absl::InvalidArgumentError("the import key is not an RSA private key in PKCS#8 DER");
  }
  return FromKey(std::move(key));
}

absl::StatusOr<ImportKeyPair> ImportKeyPair::FromKey(KeyPtr key) {
  if (!EVP_PKEY_is_a(key.get(), "RSA")) {
    return absl::InvalidArgumentError("the import key is not an RSA key");
  }
  const int bits = EVP_PKEY_get_bits(key.get());
  if (absl::Status s = CheckBits("the import key", bits); !s.ok()) return s;

  const int der_len = i2d_PUBKEY(key.get(), nullptr);
  if (der_len <= 0) return OpenSslFailure("encode the public key");
  std::string der(static_cast<size_t>(der_len), '\0');
  unsigned char* p = reinterpret_cast<unsigned char*>(der.data());
  if (i2d_PUBKEY(key.get(), &p) != der_len) return OpenSslFailure("encode the public key");

  OpenSslPtr<BIO> bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_PUBKEY(bio.get(), key.get()) != 1) {
    return OpenSslFailure("encode the public key as PEM");
  }
  char* pem = nullptr;
  const long pem_len = BIO_get_mem_data(bio.get(), &pem);
  if (pem == nullptr || pem_len <= 0) return OpenSslFailure("encode the public key as PEM");

  return ImportKeyPair(std::move(key), bits, std::string(pem, static_cast<size_t>(pem_len)),
                       std::move(der));
}

absl::StatusOr<crypto::SecretBytes> ImportKeyPair::PrivateKeyDer() const {
  if (key_ == nullptr) return absl::FailedPreconditionError("the import key was moved away");
  OpenSslPtr<OSSL_ENCODER_CTX> encoder(OSSL_ENCODER_CTX_new_for_pkey(
      key_.get(), EVP_PKEY_KEYPAIR, "DER", "PrivateKeyInfo", nullptr));
  unsigned char* der = nullptr;
  size_t der_len = 0;
  if (encoder == nullptr || OSSL_ENCODER_CTX_get_num_encoders(encoder.get()) == 0 ||
      OSSL_ENCODER_to_data(encoder.get(), &der, &der_len) != 1) {
    return OpenSslFailure("encode the import key as PKCS#8");
  }
  crypto::SecretBytes out(absl::MakeConstSpan(der, der_len));
  OPENSSL_clear_free(der, der_len);
  return out;
}

absl::StatusOr<std::string> WrapKeyMaterial(absl::string_view public_key,
                                            absl::Span<const uint8_t> material) {
  absl::StatusOr<OpenSslPtr<EVP_PKEY>> key = ParsePublicKey(public_key);
  if (!key.ok()) return key.status();

  crypto::SecretBytes aes_key(kAesKeyBytes);
  if (RAND_priv_bytes(aes_key.data(), static_cast<int>(aes_key.size())) != 1) {
    return OpenSslFailure("make the one-time AES key");
  }
  absl::StatusOr<std::string> kwp = AesKeyWrapPad(aes_key.span(), material);
  if (!kwp.ok()) return kwp.status();

  OpenSslPtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key->get(), nullptr));
  if (ctx == nullptr || EVP_PKEY_encrypt_init(ctx.get()) <= 0 || !SetOaepSha256(ctx.get())) {
    return OpenSslFailure("set up RSA-OAEP encryption");
  }
  // RSA ciphertext is always the modulus' size, so the blob splits at a known place.
  const size_t rsa_len = static_cast<size_t>(EVP_PKEY_get_size(key->get()));
  std::string wrapped(rsa_len + kwp->size(), '\0');
  size_t len = rsa_len;
  if (EVP_PKEY_encrypt(ctx.get(), reinterpret_cast<unsigned char*>(wrapped.data()), &len,
                       aes_key.data(), aes_key.size()) <= 0 ||
      len != rsa_len) {
    return OpenSslFailure("encrypt the one-time AES key with RSA-OAEP");
  }
  std::memcpy(wrapped.data() + rsa_len, kwp->data(), kwp->size());
  return wrapped;
}

absl::StatusOr<crypto::SecretBytes> UnwrapKeyMaterial(const ImportKeyPair& key,
                                                      absl::string_view wrapped) {
  if (key.key_ == nullptr) return absl::FailedPreconditionError("the import key was moved away");
  const size_t rsa_len = static_cast<size_t>(EVP_PKEY_get_size(key.key_.get()));
  if (wrapped.size() < rsa_len + kMinKwpBytes || (wrapped.size() - rsa_len) % kKwpBlockBytes != 0 ||
      wrapped.size() - rsa_len > kMaxKwpBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the wrapped key material is ", wrapped.size(), " bytes; an RSA-", key.bits(),
        " import key's wrapped material is ", rsa_len, " bytes of RSA-OAEP followed by ",
        kMinKwpBytes, " to ", kMaxKwpBytes, " of AES key wrap, in multiples of ", kKwpBlockBytes));
  }

  OpenSslPtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key.key_.get(), nullptr));
  if (ctx == nullptr || EVP_PKEY_decrypt_init(ctx.get()) <= 0 || !SetOaepSha256(ctx.get())) {
    return OpenSslFailure("set up RSA-OAEP decryption");
  }
  crypto::SecretBytes aes_key(rsa_len);  // room for anything OAEP could hold
  size_t aes_key_len = aes_key.size();
  if (EVP_PKEY_decrypt(ctx.get(), aes_key.data(), &aes_key_len, Bytes(wrapped), rsa_len) <= 0) {
    ERR_clear_error();
    return absl::InvalidArgumentError(kDoesNotDecrypt);
  }
  // A shorter one-time key would make the import weaker than its RSA key.
  if (aes_key_len != kAesKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the wrapped key material's RSA-OAEP part holds a ", aes_key_len,
                     "-byte key; the one-time key must be AES-256 (32 bytes)"));
  }
  return AesKeyUnwrapPad(aes_key.span().first(kAesKeyBytes), wrapped.substr(rsa_len));
}

absl::StatusOr<std::string> AesKeyWrapPad(absl::Span<const uint8_t> kek,
                                          absl::Span<const uint8_t> material) {
  if (material.empty()) return absl::InvalidArgumentError("there is no key material to wrap");
  if (material.size() > kMaxKeyMaterialBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the key material is ", material.size(),
                                                   " bytes; at most ", kMaxKeyMaterialBytes,
                                                   " are wrapped"));
  }
  // Padded to whole blocks, plus the integrity block.
  const size_t padded = (material.size() + kKwpBlockBytes - 1) / kKwpBlockBytes * kKwpBlockBytes;
  std::string wrapped(padded + kKwpBlockBytes, '\0');
  absl::StatusOr<size_t> written =
      RunKeyWrapPad(/*wrap=*/true, kek, material,
                    absl::MakeSpan(reinterpret_cast<uint8_t*>(wrapped.data()), wrapped.size()));
  if (!written.ok()) return written.status();
  if (*written != wrapped.size()) return absl::InternalError("AES key wrap gave an odd length");
  return wrapped;
}

absl::StatusOr<crypto::SecretBytes> AesKeyUnwrapPad(absl::Span<const uint8_t> kek,
                                                    absl::string_view wrapped) {
  if (wrapped.size() < kMinKwpBytes || wrapped.size() % kKwpBlockBytes != 0 ||
      wrapped.size() > kMaxKwpBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the AES key wrap part is ", wrapped.size(), " bytes; it is ", kMinKwpBytes,
                     " to ", kMaxKwpBytes, " bytes, in multiples of ", kKwpBlockBytes));
  }
  crypto::SecretBytes unwrapped(wrapped.size());  // more than the material needs
  absl::StatusOr<size_t> written =
      RunKeyWrapPad(/*wrap=*/false, kek, absl::MakeConstSpan(Bytes(wrapped), wrapped.size()),
                    unwrapped.mutable_span());
  if (!written.ok()) return written.status();
  return crypto::SecretBytes(unwrapped.span().first(*written));
}

}  // namespace sealbox::server::custody
