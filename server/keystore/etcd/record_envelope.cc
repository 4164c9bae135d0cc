#include "server/keystore/etcd/record_envelope.h"

#include <openssl/rand.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "server/keystore/kek.h"
#include "server/keystore/storage.h"

namespace sealbox::server::etcd {
namespace {

constexpr char kMagic[4] = {'S', 'B', 'X', 'R'};
constexpr uint8_t kFormatVersion = 1;
constexpr size_t kVersionAt = 4, kFingerprintAt = 5, kSaltAt = 21, kNonceAt = 37;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
static_assert(kSaltAt == kFingerprintAt + kKekFingerprintBytes);
static_assert(kNonceAt == kSaltAt + kKekSaltBytes);
static_assert(kNonceAt + kNonceBytes == kRecordHeaderBytes);
constexpr char kInfo[] = "sealbox/v1/etcd-record";

const uint8_t* Bytes(absl::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// The AAD: the header, then the etcd key.
std::string Aad(absl::string_view header, absl::string_view etcd_key) {
  return absl::StrCat(header, etcd_key);
}

bool HeaderLooksRight(absl::string_view value) {
  return value.size() >= kRecordHeaderBytes + kTagBytes &&
         std::memcmp(value.data(), kMagic, sizeof(kMagic)) == 0 &&
         static_cast<uint8_t>(value[kVersionAt]) == kFormatVersion;
}

}  // namespace

absl::StatusOr<std::string> SealRecord(const Kek& kek, absl::string_view etcd_key,
                                       const internal::Record& record) {
  crypto::SecretBytes plaintext(record.ByteSizeLong());
  if (!record.SerializeToArray(plaintext.data(), plaintext.size())) {
    return absl::InternalError("serializing a keystore record failed");
  }
  std::string out(kRecordHeaderBytes + plaintext.size() + kTagBytes, '\0');
  uint8_t* header = reinterpret_cast<uint8_t*>(out.data());
  std::memcpy(header, kMagic, sizeof(kMagic));
  header[kVersionAt] = kFormatVersion;
  const KekFingerprint fingerprint = FingerprintOf(kek);
  std::memcpy(header + kFingerprintAt, fingerprint.data(), fingerprint.size());
  if (RAND_bytes(header + kSaltAt, kKekSaltBytes + kNonceBytes) != 1) {
    return absl::InternalError("RAND_bytes failed");
  }
  auto key = WrappingKey(kek, absl::MakeConstSpan(header + kSaltAt, kKekSaltBytes), kInfo);
  if (!key.ok()) return key.status();
  const std::string aad = Aad(absl::string_view(out.data(), kRecordHeaderBytes), etcd_key);
  absl::Span<uint8_t> body =
      absl::MakeSpan(header + kRecordHeaderBytes, plaintext.size() + kTagBytes);
  absl::Status sealed = (*key)->Seal(absl::MakeConstSpan(header + kNonceAt, kNonceBytes),
                                     absl::MakeConstSpan(Bytes(aad), aad.size()), plaintext.span(),
                                     body.first(plaintext.size()), body.subspan(plaintext.size()));
  if (!sealed.ok()) return sealed;
  return out;
}

bool RecordWrittenWithKek(const Kek& kek, absl::string_view value) {
  return HeaderLooksRight(value) && FingerprintMatches(kek, Bytes(value) + kFingerprintAt);
}

absl::StatusOr<internal::Record> OpenRecord(const Kek& kek, absl::string_view etcd_key,
                                            absl::string_view value) {
  const absl::Status damaged = absl::DataLossError(
      absl::StrCat("etcd record ", etcd_key, " is damaged, or was moved there from another name"));
  if (!HeaderLooksRight(value)) return damaged;
  if (!FingerprintMatches(kek, Bytes(value) + kFingerprintAt)) {
    return absl::FailedPreconditionError(
        absl::StrCat("etcd record ", etcd_key, " was written with a different KEK"));
  }
  auto key = WrappingKey(kek, absl::MakeConstSpan(Bytes(value) + kSaltAt, kKekSaltBytes), kInfo);
  if (!key.ok()) return key.status();
  const std::string aad = Aad(value.substr(0, kRecordHeaderBytes), etcd_key);
  absl::string_view body = value.substr(kRecordHeaderBytes);
  crypto::SecretBytes plaintext(body.size() - kTagBytes);
  absl::Status opened = (*key)->Open(absl::MakeConstSpan(Bytes(value) + kNonceAt, kNonceBytes),
                                     absl::MakeConstSpan(Bytes(aad), aad.size()),
                                     absl::MakeConstSpan(Bytes(body), plaintext.size()),
                                     absl::MakeConstSpan(Bytes(body) + plaintext.size(), kTagBytes),
                                     plaintext.mutable_span());
  internal::Record record;
  if (!opened.ok() || !record.ParseFromArray(plaintext.data(), plaintext.size()) ||
      record.value_case() == internal::Record::VALUE_NOT_SET) {
    WipeRecord(record);
    return damaged;
  }
  return record;
}

}  // namespace sealbox::server::etcd
