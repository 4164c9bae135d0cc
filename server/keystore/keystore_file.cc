#include "server/keystore/keystore_file.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "crypto/aes_gcm.h"
#include "crypto/byte_order/byte_order.h"
#include "server/keystore/kek.h"

namespace sealbox::server {
namespace {

constexpr char kMagic[8] = {'S', 'B', 'X', 'K', 'E', 'Y', 'S', '\n'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kFingerprintBytes = kKekFingerprintBytes;
constexpr size_t kSaltBytes = kKekSaltBytes;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr size_t kVersionAt = 8, kGenerationAt = 12, kFingerprintAt = 20, kSaltAt = 36,
                 kNonceAt = 52;
static_assert(kNonceAt + kNonceBytes == kKeystoreHeaderBytes);

absl::Status Damaged(absl::string_view path) {
  return absl::DataLossError(absl::StrCat("keystore ", path, " is damaged"));
}

// Whether a (checked) header carries `kek`'s fingerprint. Constant time.
bool HeaderFingerprintMatches(const Kek& kek, const uint8_t* header) {
  return FingerprintMatches(kek, header + kFingerprintAt);
}

absl::StatusOr<std::unique_ptr<crypto::ExpandedKey>> FileWrappingKey(const Kek& kek,
                                                                     const uint8_t* salt) {
  return WrappingKey(kek, absl::MakeConstSpan(salt, kSaltBytes), "sealbox/v1/keystore");
}

// Checks the magic and the format version of a header.
absl::Status CheckHeader(absl::Span<const uint8_t> envelope, absl::string_view path) {
  if (envelope.size() < kKeystoreHeaderBytes ||
      std::memcmp(envelope.data(), kMagic, sizeof(kMagic)) != 0) {
    return Damaged(path);
  }
  uint32_t version = crypto::LoadBigEndian32(envelope.data() + kVersionAt);
  if (version != kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat("keystore ", path, " has format version ",
                                                      version, "; this server reads ",
                                                      kFormatVersion));
  }
  return absl::OkStatus();
}

}  // namespace

KeystoreContents::~KeystoreContents() {
  for (auto& tenant : *file.mutable_tenants()) {
    for (auto& key : *tenant.mutable_keys()) {
      for (auto& version : *key.mutable_versions()) WipeMaterial(version);
    }
    for (auto& pair : *tenant.mutable_import_keys()) WipeImportKey(pair);
  }
}

void WipeImportKey(internal::ImportKeyPair& pair) {
  std::string& secret = *pair.mutable_private_key_pkcs8();
  OPENSSL_cleanse(secret.data(), secret.size());
  secret.clear();
}

void WipeMaterial(internal::KeyVersion& version) {
  std::string& material = *version.mutable_material();
  OPENSSL_cleanse(material.data(), material.size());
  material.clear();
}

absl::StatusOr<std::vector<uint8_t>> SealKeystore(const Kek& kek,
                                                  const KeystoreContents& contents) {
  crypto::SecretBytes plaintext(contents.file.ByteSizeLong());
  if (!contents.file.SerializeToArray(plaintext.data(), plaintext.size())) {
    return absl::InternalError("serializing the keystore failed");
  }
  std::vector<uint8_t> out(kKeystoreHeaderBytes + plaintext.size() + kTagBytes);
  uint8_t* header = out.data();
  std::memcpy(header, kMagic, sizeof(kMagic));
  crypto::StoreBigEndian32(kFormatVersion, header + kVersionAt);
  crypto::StoreBigEndian64(contents.generation, header + kGenerationAt);
  const KekFingerprint fingerprint = FingerprintOf(kek);
  std::memcpy(header + kFingerprintAt, fingerprint.data(), fingerprint.size());
  if (RAND_bytes(header + kSaltAt, kSaltBytes + kNonceBytes) != 1) {
    return absl::InternalError("RAND_bytes failed");
  }
  auto key = FileWrappingKey(kek, header + kSaltAt);
  if (!key.ok()) return key.status();
  absl::Span<uint8_t> body = absl::MakeSpan(out).subspan(kKeystoreHeaderBytes);
  absl::Status sealed =
      (*key)->Seal(absl::MakeConstSpan(header + kNonceAt, kNonceBytes),
                   absl::MakeConstSpan(header, kKeystoreHeaderBytes), plaintext.span(),
                   body.first(plaintext.size()), body.subspan(plaintext.size()));
  if (!sealed.ok()) return sealed;
  return out;
}

bool WrittenWithKek(const Kek& kek, absl::Span<const uint8_t> envelope) {
  if (!CheckHeader(envelope, "").ok()) return false;
  return HeaderFingerprintMatches(kek, envelope.data());
}

absl::StatusOr<KeystoreContents> OpenKeystore(const Kek& kek, absl::Span<const uint8_t> envelope,
                                              absl::string_view path) {
  if (absl::Status s = CheckHeader(envelope, path); !s.ok()) return s;
  if (envelope.size() < kKeystoreHeaderBytes + kTagBytes) return Damaged(path);
  const uint8_t* header = envelope.data();
  if (!HeaderFingerprintMatches(kek, header)) {
    return absl::FailedPreconditionError(
        absl::StrCat("keystore ", path, " was written with a different KEK"));
  }
  auto key = FileWrappingKey(kek, header + kSaltAt);
  if (!key.ok()) return key.status();
  absl::Span<const uint8_t> body = envelope.subspan(kKeystoreHeaderBytes);
  crypto::SecretBytes plaintext(body.size() - kTagBytes);
  absl::Status opened = (*key)->Open(
      absl::MakeConstSpan(header + kNonceAt, kNonceBytes), envelope.first(kKeystoreHeaderBytes),
      body.first(plaintext.size()), body.subspan(plaintext.size()), plaintext.mutable_span());
  KeystoreContents contents;
  if (!opened.ok() || !contents.file.ParseFromArray(plaintext.data(), plaintext.size())) {
    return Damaged(path);
  }
  contents.generation = crypto::LoadBigEndian64(header + kGenerationAt);
  return contents;
}

absl::StatusOr<uint64_t> PeekGeneration(absl::Span<const uint8_t> envelope,
                                        absl::string_view path) {
  if (absl::Status s = CheckHeader(envelope, path); !s.ok()) return s;
  return crypto::LoadBigEndian64(envelope.data() + kGenerationAt);
}

}  // namespace sealbox::server
