#include "server/keystore/keystore_file.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "crypto/aes_gcm.h"
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

void PutBigEndian(uint64_t value, size_t bytes, uint8_t* out) {
  for (size_t i = 0; i < bytes; ++i) out[i] = value >> (8 * (bytes - 1 - i));
}

uint64_t GetBigEndian(const uint8_t* in, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value = (value << 8) | in[i];
  return value;
}

absl::Status Damaged(absl::string_view path) {
  return absl::DataLossError(absl::StrCat("keystore ", path, " is damaged"));
}

// Whether a (checked) header carries `kek`'s fingerprint. Constant time.
bool HeaderFingerprintMatches(const crypto::SecretBytes& kek, const uint8_t* header) {
  return FingerprintMatches(kek, header + kFingerprintAt);
}

absl::StatusOr<std::unique_ptr<crypto::ExpandedKey>> FileWrappingKey(
    const crypto::SecretBytes& kek, const uint8_t* salt) {
  return WrappingKey(kek, absl::MakeConstSpan(salt, kSaltBytes), "sealbox/v1/keystore");
}

// Checks the magic and the format version of a header.
absl::Status CheckHeader(absl::Span<const uint8_t> envelope, absl::string_view path) {
  if (envelope.size() < kKeystoreHeaderBytes ||
      std::memcmp(envelope.data(), kMagic, sizeof(kMagic)) != 0) {
    return Damaged(path);
  }
  uint32_t version = GetBigEndian(envelope.data() + kVersionAt, 4);
  if (version != kFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("keystore ", path, " has format version ", version,
                     "; this server reads ", kFormatVersion));
  }
  return absl::OkStatus();
}

}  // namespace

KeystoreContents::~KeystoreContents() {
  for (auto& tenant : *file.mutable_tenants()) {
    for (auto& key : *tenant.mutable_keys()) {
      for (auto& version : *key.mutable_versions()) WipeMaterial(version);
    }
  }
}

void WipeMaterial(internal::KeyVersion& version) {
  std::string& material = *version.mutable_material();
  OPENSSL_cleanse(material.data(), material.size());
  material.clear();
}

absl::StatusOr<std::vector<uint8_t>> SealKeystore(const crypto::SecretBytes& kek,
                                                  const KeystoreContents& contents) {
  if (absl::Status s = CheckKek(kek); !s.ok()) return s;
  crypto::SecretBytes plaintext(contents.file.ByteSizeLong());
  if (!contents.file.SerializeToArray(plaintext.data(), plaintext.size())) {
    return absl::InternalError("serializing the keystore failed");
  }
  std::vector<uint8_t> out(kKeystoreHeaderBytes + plaintext.size() + kTagBytes);
  uint8_t* header = out.data();
  std::memcpy(header, kMagic, sizeof(kMagic));
  PutBigEndian(kFormatVersion, 4, header + kVersionAt);
  PutBigEndian(contents.generation, 8, header + kGenerationAt);
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

bool WrittenWithKek(const crypto::SecretBytes& kek, absl::Span<const uint8_t> envelope) {
  if (!CheckKek(kek).ok() || !CheckHeader(envelope, "").ok()) return false;
  return HeaderFingerprintMatches(kek, envelope.data());
}

absl::StatusOr<KeystoreContents> OpenKeystore(const crypto::SecretBytes& kek,
                                              absl::Span<const uint8_t> envelope,
                                              absl::string_view path) {
  if (absl::Status s = CheckKek(kek); !s.ok()) return s;
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
  absl::Status opened =
      (*key)->Open(absl::MakeConstSpan(header + kNonceAt, kNonceBytes),
                   envelope.first(kKeystoreHeaderBytes), body.first(plaintext.size()),
                   body.subspan(plaintext.size()), plaintext.mutable_span());
  KeystoreContents contents;
  if (!opened.ok() || !contents.file.ParseFromArray(plaintext.data(), plaintext.size())) {
    return Damaged(path);
  }
  contents.generation = GetBigEndian(header + kGenerationAt, 8);
  return contents;
}

absl::StatusOr<uint64_t> PeekGeneration(absl::Span<const uint8_t> envelope,
                                        absl::string_view path) {
  if (absl::Status s = CheckHeader(envelope, path); !s.ok()) return s;
  return GetBigEndian(envelope.data() + kGenerationAt, 8);
}

}  // namespace sealbox::server
