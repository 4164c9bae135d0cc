// Key material carried between systems under an import key: PKCS#11's
// CKM_RSA_AES_KEY_WRAP, as AWS KMS, Google Cloud KMS import jobs and Vault Transit BYOK
// take it. The sender makes a one-time AES-256 key, encrypts it to the receiver's RSA
// public key with RSA-OAEP (SHA-256 and MGF1-SHA-256, empty label), and wraps the key
// material under it with AES key wrap with padding (RFC 5649):
//
//   wrapped = rsa_oaep(import public key, aes_key) || aes_kwp(aes_key, material)
//             modulus-size bytes (512: RSA-4096)     8 * ceil(len(material) / 8) + 8 bytes
//
// An operator can make the same bytes with the openssl command line (`openssl pkeyutl
// -encrypt ... -pkeyopt rsa_padding_mode:oaep`, `openssl enc -id-aes256-wrap-pad`); the
// test does exactly that. RSA, OAEP and key wrap all come from OpenSSL's libcrypto.
#ifndef SEALBOX_SERVER_CUSTODY_KEY_WRAP_H_
#define SEALBOX_SERVER_CUSTODY_KEY_WRAP_H_

#include <openssl/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/secret/secret_bytes.h"

namespace sealbox::server::custody {

// Key material is small (an RSA-8192 private key's PKCS#8 is under 5 KiB); the bound
// keeps every length well inside OpenSSL's int.
inline constexpr size_t kMaxKeyMaterialBytes = 64 * 1024;

class ImportKeyPair;

// Unwraps what WrapKeyMaterial (or the openssl commands above) made, into secret memory.
// INVALID_ARGUMENT, with a message an operator can act on and never any key material,
// when the length is wrong, the RSA part does not decrypt under `key` (wrapped for
// another key, or with other OAEP parameters), or the key wrap part does not unwrap.
absl::StatusOr<crypto::SecretBytes> UnwrapKeyMaterial(const ImportKeyPair& key,
                                                      absl::string_view wrapped);

// An RSA key pair that receives wrapped key material (an import key). Move-only; safe to
// use from several threads at once.
class ImportKeyPair {
 public:
  // RSA-2048 to RSA-16384: the range accepted here and of any public key wrapped to.
  static constexpr int kMinBits = 2048;
  static constexpr int kMaxBits = 16384;

  // A new pair (4096 bits in production; tests may pass 2048 to be quick).
  static absl::StatusOr<ImportKeyPair> Generate(int bits = 4096);

  // The pair from what PrivateKeyDer gave. INVALID_ARGUMENT when `der` is not an RSA
  // private key in unencrypted PKCS#8 DER, or is outside kMinBits..kMaxBits.
  static absl::StatusOr<ImportKeyPair> FromPrivateKeyDer(absl::Span<const uint8_t> der);

  // The private key as PKCS#8 DER, in secret memory (the caller stores it encrypted).
  absl::StatusOr<crypto::SecretBytes> PrivateKeyDer() const;

  // The public key (SubjectPublicKeyInfo), to give to senders: as PEM ("-----BEGIN
  // PUBLIC KEY-----") and as DER.
  const std::string& PublicKeyPem() const { return public_pem_; }
  const std::string& PublicKeyDer() const { return public_der_; }

  int bits() const { return bits_; }

 private:
  struct EvpPkeyFree {
    void operator()(EVP_PKEY* key) const;
  };
  using KeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;

  // Checks the key's type and size and encodes its public half once, so that the
  // accessors above cannot fail.
  static absl::StatusOr<ImportKeyPair> FromKey(KeyPtr key);

  ImportKeyPair(KeyPtr key, int bits, std::string public_pem, std::string public_der)
      : key_(std::move(key)),
        bits_(bits),
        public_pem_(std::move(public_pem)),
        public_der_(std::move(public_der)) {}

  friend absl::StatusOr<crypto::SecretBytes> UnwrapKeyMaterial(const ImportKeyPair& key,
                                                               absl::string_view wrapped);

  KeyPtr key_;  // null only once moved from
  int bits_ = 0;
  std::string public_pem_;
  std::string public_der_;
};

// Wraps `material` (1 to kMaxKeyMaterialBytes bytes) for the holder of the RSA public key
// `public_key` (SubjectPublicKeyInfo, PEM or DER): what a sender does, such as another
// sealbox exporting a key. INVALID_ARGUMENT when the public key or the material is not
// one this format takes.
absl::StatusOr<std::string> WrapKeyMaterial(absl::string_view public_key,
                                            absl::Span<const uint8_t> material);

// The key wrap step alone: AES key wrap with padding (RFC 5649, the default alternative
// IV A65959A6) under a 16-, 24- or 32-byte `kek`. Exposed for RFC 5649's test vectors,
// which use AES-192; the wrapped format above always uses AES-256.
absl::StatusOr<std::string> AesKeyWrapPad(absl::Span<const uint8_t> kek,
                                          absl::Span<const uint8_t> material);
// INVALID_ARGUMENT when `wrapped` does not unwrap under `kek` (altered, or wrapped under
// another key).
absl::StatusOr<crypto::SecretBytes> AesKeyUnwrapPad(absl::Span<const uint8_t> kek,
                                                    absl::string_view wrapped);

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_KEY_WRAP_H_
