#include "server/custody/sealed_kek.h"

#include <utility>
#include <vector>

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

absl::StatusOr<internal::SealedKek> SealOne(RootKey& root, const Kek& kek, absl::Time created) {
  const KekFingerprint bytes = FingerprintOf(kek);
  const std::string fingerprint(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  absl::StatusOr<std::string> sealed = root.Wrap(kek.span(), Context(fingerprint));
  if (!sealed.ok()) return sealed.status();
  internal::SealedKek one;
  one.set_fingerprint(fingerprint);
  one.set_root_key(root.Describe());
  one.set_sealed(*std::move(sealed));
  one.set_created_unix(absl::ToUnixSeconds(created));
  return one;
}

absl::StatusOr<internal::SealedKeks> Parse(absl::string_view sealed, absl::string_view where) {
  internal::SealedKeks keks;
  bool whole = keks.ParseFromArray(sealed.data(), static_cast<int>(sealed.size())) &&
               keks.format_version() != 0 && keks.has_current() &&
               keks.current().fingerprint().size() == kKekFingerprintBytes;
  for (const internal::SealedKek& one : keks.previous()) {
    whole = whole && one.fingerprint().size() == kKekFingerprintBytes;
  }
  if (!whole) return absl::DataLossError(absl::StrCat("the sealed KEK in ", where, " is damaged"));
  if (keks.format_version() != kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat("the sealed KEK in ", where,
                                                      " has format version ", keks.format_version(),
                                                      "; this server reads ", kFormatVersion));
  }
  return keks;
}

absl::StatusOr<Kek> UnsealOne(RootKey& root, const internal::SealedKek& one,
                              absl::string_view where) {
  absl::StatusOr<crypto::SecretBytes> bytes = root.Unwrap(one.sealed(), Context(one.fingerprint()));
  if (absl::IsFailedPrecondition(bytes.status())) {
    return absl::FailedPreconditionError(
        absl::StrCat(bytes.status().message(), " (", where, ", sealed by ", one.root_key(), ")"));
  }
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Kek> kek = Kek::FromBytes(bytes->span());
  if (!kek.ok() ||
      !FingerprintMatches(*kek, reinterpret_cast<const uint8_t*>(one.fingerprint().data()))) {
    return absl::DataLossError(absl::StrCat("the sealed KEK in ", where,
                                            " opened to a KEK its fingerprint does not name"));
  }
  return kek;
}

}  // namespace

absl::StatusOr<std::string> SealKek(RootKey& root, const Kek& kek, absl::Time created) {
  absl::StatusOr<internal::SealedKek> one = SealOne(root, kek, created);
  if (!one.ok()) return one.status();
  internal::SealedKeks keks;
  keks.set_format_version(kFormatVersion);
  *keks.mutable_current() = *std::move(one);
  return keks.SerializeAsString();
}

absl::StatusOr<std::string> SealNextKek(RootKey& root, const Kek& next, absl::Time created,
                                        absl::string_view sealed) {
  absl::StatusOr<internal::SealedKeks> now = Parse(sealed, "the store");
  if (!now.ok()) return now.status();
  absl::StatusOr<internal::SealedKek> one = SealOne(root, next, created);
  if (!one.ok()) return one.status();
  internal::SealedKeks keks;
  keks.set_format_version(kFormatVersion);
  *keks.mutable_current() = *std::move(one);
  *keks.add_previous() = now->current();
  for (const internal::SealedKek& older : now->previous()) *keks.add_previous() = older;
  return keks.SerializeAsString();
}

absl::StatusOr<std::string> DropPreviousKeks(absl::string_view sealed) {
  absl::StatusOr<internal::SealedKeks> keks = Parse(sealed, "the store");
  if (!keks.ok()) return keks.status();
  keks->clear_previous();
  return keks->SerializeAsString();
}

absl::StatusOr<std::shared_ptr<const KekRing>> UnsealKeks(RootKey& root, absl::string_view sealed,
                                                          absl::string_view where,
                                                          int64_t revision) {
  absl::StatusOr<internal::SealedKeks> keks = Parse(sealed, where);
  if (!keks.ok()) return keks.status();
  absl::StatusOr<Kek> current = UnsealOne(root, keks->current(), where);
  if (!current.ok()) return current.status();
  std::vector<Kek> previous;
  for (const internal::SealedKek& one : keks->previous()) {
    absl::StatusOr<Kek> kek = UnsealOne(root, one, where);
    if (!kek.ok()) return kek.status();
    previous.push_back(*std::move(kek));
  }
  return std::make_shared<const KekRing>(*std::move(current), std::move(previous), revision);
}

absl::StatusOr<SealedKekInfo> InfoOf(absl::string_view sealed, absl::string_view where) {
  absl::StatusOr<internal::SealedKeks> keks = Parse(sealed, where);
  if (!keks.ok()) return keks.status();
  SealedKekInfo info;
  info.fingerprint = absl::BytesToHexString(keks->current().fingerprint());
  info.created = absl::FromUnixSeconds(keks->current().created_unix());
  info.previous = keks->previous_size();
  return info;
}

}  // namespace sealbox::server::custody
