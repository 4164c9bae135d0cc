#include "server/keystore/kek.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "crypto/format/hkdf.h"

namespace sealbox::server {

absl::StatusOr<Kek> Kek::FromBytes(absl::Span<const uint8_t> bytes) {
  if (bytes.size() != kKekBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the KEK must be ", kKekBytes, " bytes, raw or as ", 2 * kKekBytes, " hex digits"));
  }
  return Kek(crypto::SecretBytes(bytes));
}

KekFingerprint FingerprintOf(const Kek& kek) {
  static constexpr char kLabel[] = "sealbox/v1/kek-fingerprint";
  uint8_t mac[EVP_MAX_MD_SIZE];
  unsigned int mac_bytes = 0;
  HMAC(EVP_sha256(), kek.span().data(), kek.span().size(), reinterpret_cast<const uint8_t*>(kLabel),
       sizeof(kLabel) - 1, mac, &mac_bytes);
  KekFingerprint fingerprint;
  std::memcpy(fingerprint.data(), mac, fingerprint.size());
  OPENSSL_cleanse(mac, sizeof(mac));
  return fingerprint;
}

bool FingerprintMatches(const Kek& kek, const uint8_t* fingerprint) {
  const KekFingerprint expected = FingerprintOf(kek);
  return CRYPTO_memcmp(expected.data(), fingerprint, expected.size()) == 0;
}

absl::StatusOr<std::unique_ptr<crypto::ExpandedKey>> WrappingKey(const Kek& kek,
                                                                 absl::Span<const uint8_t> salt,
                                                                 absl::string_view info) {
  auto key = crypto::HkdfSha256(
      kek.span(), salt,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(info.data()), info.size()), 32);
  if (!key.ok()) return key.status();
  return crypto::ExpandedKey::Create(key->span());
}

}  // namespace sealbox::server
