#include "server/keystore/kek.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "crypto/format/hkdf.h"

namespace sealbox::server {

absl::Status CheckKek(const crypto::SecretBytes& kek, absl::string_view what) {
  if (kek.size() != kKekBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be ", kKekBytes, " bytes, not ", kek.size()));
  }
  return absl::OkStatus();
}

absl::Status CheckKeks(const crypto::SecretBytes& kek, const crypto::SecretBytes& previous) {
  if (absl::Status s = CheckKek(kek); !s.ok()) return s;
  return previous.empty() ? absl::OkStatus() : CheckKek(previous, "the previous KEK");
}

KekFingerprint FingerprintOf(const crypto::SecretBytes& kek) {
  static constexpr char kLabel[] = "sealbox/v1/kek-fingerprint";
  uint8_t mac[EVP_MAX_MD_SIZE];
  unsigned int mac_bytes = 0;
  HMAC(EVP_sha256(), kek.data(), kek.size(), reinterpret_cast<const uint8_t*>(kLabel),
       sizeof(kLabel) - 1, mac, &mac_bytes);
  KekFingerprint fingerprint;
  std::memcpy(fingerprint.data(), mac, fingerprint.size());
  OPENSSL_cleanse(mac, sizeof(mac));
  return fingerprint;
}

bool FingerprintMatches(const crypto::SecretBytes& kek, const uint8_t* fingerprint) {
  const KekFingerprint expected = FingerprintOf(kek);
  return CRYPTO_memcmp(expected.data(), fingerprint, expected.size()) == 0;
}

absl::StatusOr<std::unique_ptr<crypto::ExpandedKey>> WrappingKey(
    const crypto::SecretBytes& kek, absl::Span<const uint8_t> salt,
    absl::string_view info) {
  auto key = crypto::HkdfSha256(
      kek.span(), salt,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(info.data()), info.size()),
      32);
  if (!key.ok()) return key.status();
  return crypto::ExpandedKey::Create(key->span());
}

}  // namespace sealbox::server
