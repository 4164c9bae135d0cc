#include "server/custody/sealed_kek.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "sealbox/internal/sealed_kek.pb.h"

namespace sealbox::server::custody {
namespace {

constexpr uint32_t kFormatVersion = 1;

// The root key's context: binds the sealed bytes to the fingerprint beside them, so
// that an altered fingerprint fails to open rather than name another KEK.
std::string Context(absl::string_view fingerprint) {
  return absl::StrCat("sealbox/v1/sealed-kek", fingerprint);
}

absl::string_view AsChars(const KekFingerprint& fingerprint) {
  return absl::string_view(reinterpret_cast<const char*>(fingerprint.data()), fingerprint.size());
}

}  // namespace

absl::StatusOr<std::string> SealKek(RootKey& root, const Kek& kek) {
  const KekFingerprint fingerprint = FingerprintOf(kek);
  absl::StatusOr<std::string> sealed = root.Wrap(kek.span(), Context(AsChars(fingerprint)));
  if (!sealed.ok()) return sealed.status();
  internal::SealedKeks keks;
  keks.set_format_version(kFormatVersion);
  internal::SealedKek& current = *keks.mutable_current();
  current.set_fingerprint(std::string(AsChars(fingerprint)));
  current.set_root_key(root.Describe());
  current.set_sealed(*std::move(sealed));
  return keks.SerializeAsString();
}

absl::StatusOr<Kek> UnsealKek(RootKey& root, absl::string_view sealed, absl::string_view where) {
  internal::SealedKeks keks;
  if (!keks.ParseFromArray(sealed.data(), static_cast<int>(sealed.size())) ||
      keks.format_version() == 0 || !keks.has_current() ||
      keks.current().fingerprint().size() != kKekFingerprintBytes) {
    return absl::DataLossError(absl::StrCat("the sealed KEK in ", where, " is damaged"));
  }
  if (keks.format_version() != kFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("the sealed KEK in ", where, " has format version ", keks.format_version(),
                     "; this server reads ", kFormatVersion));
  }
  const internal::SealedKek& current = keks.current();
  absl::StatusOr<crypto::SecretBytes> bytes =
      root.Unwrap(current.sealed(), Context(current.fingerprint()));
  if (absl::IsFailedPrecondition(bytes.status())) {
    return absl::FailedPreconditionError(absl::StrCat(bytes.status().message(), " (", where,
                                                      ", sealed by ", current.root_key(), ")"));
  }
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Kek> kek = Kek::FromBytes(bytes->span());
  if (!kek.ok() ||
      !FingerprintMatches(*kek, reinterpret_cast<const uint8_t*>(current.fingerprint().data()))) {
    return absl::DataLossError(
        absl::StrCat("the sealed KEK in ", where, " opened to a KEK its fingerprint does not name"));
  }
  return kek;
}

std::string SealedFingerprintHex(absl::string_view sealed) {
  internal::SealedKeks keks;
  if (!keks.ParseFromArray(sealed.data(), static_cast<int>(sealed.size()))) return "";
  return absl::BytesToHexString(keks.current().fingerprint());
}

}  // namespace sealbox::server::custody
