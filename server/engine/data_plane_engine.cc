#include "server/engine/data_plane_engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "crypto/aes_gcm.h"
#include "crypto/decryption_failure.h"
#include "crypto/format/output_bytes.h"
#include "crypto/secret/secure_wipe.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

absl::Status KeyNotFound(const std::string& key) {
  // Only ever about the caller's own tenant: another tenant's keys are invisible.
  return absl::NotFoundError(absl::StrCat("key \"", key, "\" not found"));
}

// While DisableKey holds the key (the message says how to undo it: the caller is
// its tenant).
absl::Status KeyDisabled(const std::string& key) {
  return absl::FailedPreconditionError(absl::StrCat(
      "key \"", key, "\" is disabled: no version seals or opens until it is enabled (EnableKey)"));
}

// The caller's key if it may be used: NOT_FOUND, or KeyDisabled.
absl::StatusOr<const KeyEntry*> UsableKey(const Snapshot& snapshot, const std::string& tenant,
                                          const std::string& key) {
  const KeyEntry* entry = snapshot.FindKey(tenant, key);
  if (entry == nullptr) return KeyNotFound(key);
  if (entry->disabled) return KeyDisabled(key);
  return entry;
}

// A version number that names no version can only come from a damaged or forged
// ciphertext: it gets the same answer as any other (a real but disabled version
// keeps its FAILED_PRECONDITION, which tells an operator what to fix).
absl::Status UnknownVersionIsDecryptionFailure(const absl::Status& status) {
  if (absl::IsNotFound(status)) return crypto::DecryptionFailedError();
  return status;
}

// A ciphertext's first byte names its format (docs/FORMAT.md) and tells an attacker
// nothing, so one given to the wrong call is told which call takes it.
absl::Status RefuseStream(absl::Span<const uint8_t> ciphertext, absl::string_view why) {
  if (ciphertext.empty() || ciphertext[0] != crypto::kStreamFormatV1) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("this is a stream ciphertext (from SealStream): ", why));
}

}  // namespace

absl::Status CheckOpenStreamFormat(uint8_t first_byte) {
  if (first_byte != crypto::kUnaryFormatV1) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "this is a unary ciphertext (from Seal or Rewrap): open it with Open");
}

DataPlaneEngine::DataPlaneEngine(crypto::Epochs& epochs, uint64_t max_decryption_failures)
    : epochs_(epochs), failure_limit_(max_decryption_failures) {}

uint32_t DataPlaneEngine::VersionIn(absl::Span<const uint8_t> ciphertext) {
  absl::StatusOr<crypto::UnaryHeader> header = crypto::ParseUnaryHeader(ciphertext);
  return header.ok() ? header->key_version : 0;
}

absl::Status DataPlaneEngine::NotKnownYet(const CallKey& key, uint32_t version) {
  if (!key.keys.StoreUnreachableFor(key.tenant, key.name, version)) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("key \"", key.name, "\" version ", version,
                   " is newer than this replica knows of, and it cannot reach its store to learn "
                   "of it now: try again, or another replica"));
}

template <typename Output>
absl::StatusOr<uint32_t> DataPlaneEngine::Seal(const CallKey& key,
                                               absl::Span<const uint8_t> plaintext,
                                               absl::Span<const uint8_t> aad, Output& ciphertext) {
  absl::StatusOr<const KeyEntry*> entry =
      UsableKey(key.keys.For(key.tenant, key.name, /*version=*/0), key.tenant, key.name);
  if (!entry.ok()) return entry.status();
  absl::StatusOr<std::shared_ptr<crypto::EpochSubkey>> epoch = (*entry)->sealing->Current();
  if (!epoch.ok()) return epoch.status();
  absl::StatusOr<Output> sealed = (*epoch)->Seal<Output>(plaintext, aad);
  if (!sealed.ok()) return sealed.status();
  ciphertext = *std::move(sealed);
  return (*epoch)->version();
}

absl::StatusOr<std::shared_ptr<const crypto::EpochSubkey>> DataPlaneEngine::SubkeyForOpen(
    const KeyEntry& entry, const crypto::UnaryHeader& header) {
  absl::StatusOr<const KeyVersionEntry*> version = entry.VersionForOpen(header.key_version);
  if (!version.ok()) return UnknownVersionIsDecryptionFailure(version.status());
  return epochs_.ForOpening(entry.sealing.get(), (*version)->material->span(),
                            {entry.tenant, entry.name, header.key_version}, header.epoch_id);
}

template <typename Output>
absl::StatusOr<uint32_t> DataPlaneEngine::Open(const CallKey& key,
                                               absl::Span<const uint8_t> ciphertext,
                                               absl::Span<const uint8_t> aad, Output& plaintext) {
  if (absl::Status s = RefuseStream(ciphertext, "open it with OpenStream"); !s.ok()) {
    return s;
  }
  const uint32_t named = VersionIn(ciphertext);
  absl::StatusOr<const KeyEntry*> entry =
      UsableKey(key.keys.For(key.tenant, key.name, named), key.tenant, key.name);
  if (!entry.ok()) return entry.status();
  if (absl::Status s = NotKnownYet(key, named); !s.ok()) return s;
  if (absl::Status s = failure_limit_.Check(**entry); !s.ok()) return s;
  absl::StatusOr<uint32_t> version = OpenWith(**entry, ciphertext, aad, plaintext);
  if (crypto::IsDecryptionFailure(version.status())) CountFailure(**entry);
  return version;
}

template <typename Output>
absl::StatusOr<uint32_t> DataPlaneEngine::OpenWith(const KeyEntry& entry,
                                                   absl::Span<const uint8_t> ciphertext,
                                                   absl::Span<const uint8_t> aad,
                                                   Output& plaintext) {
  absl::StatusOr<crypto::UnaryHeader> header = crypto::ParseUnaryHeader(ciphertext);
  if (!header.ok()) return header.status();
  absl::StatusOr<std::shared_ptr<const crypto::EpochSubkey>> subkey = SubkeyForOpen(entry, *header);
  if (!subkey.ok()) return subkey.status();
  plaintext.clear();  // then sized to fit
  absl::Status opened = (*subkey)->OpenInto(
      ciphertext, aad, crypto::Grow(plaintext, crypto::OpenedBytes(ciphertext)));
  if (!opened.ok()) {
    plaintext.clear();  // already wiped
    return opened;
  }
  return header->key_version;
}

template <typename Output>
absl::StatusOr<Rewrapped> DataPlaneEngine::Rewrap(const CallKey& key,
                                                  absl::Span<const uint8_t> ciphertext,
                                                  absl::Span<const uint8_t> aad,
                                                  Output& new_ciphertext) {
  if (absl::Status s =
          RefuseStream(ciphertext, "Rewrap takes unary ciphertexts only; open it with OpenStream");
      !s.ok()) {
    return s;
  }
  // Opened and sealed again with one snapshot (the call's, caught up at most once,
  // by the open): never under an older primary than the ciphertext's own version.
  crypto::OutputBytes plaintext;
  absl::StatusOr<uint32_t> opened = Open(key, ciphertext, aad, plaintext);
  if (!opened.ok()) return opened.status();
  absl::StatusOr<uint32_t> sealed = Seal(key, plaintext, aad, new_ciphertext);
  // The plaintext never leaves the server; wipe it before returning.
  crypto::SecureWipe(plaintext.data(), plaintext.size());
  if (!sealed.ok()) return sealed.status();
  return Rewrapped{*sealed, *opened};
}

// The two outputs: a unary call's, and a protobuf field's (a batch item's).
template absl::StatusOr<uint32_t> DataPlaneEngine::Seal(const CallKey&, absl::Span<const uint8_t>,
                                                        absl::Span<const uint8_t>,
                                                        crypto::OutputBytes&);
template absl::StatusOr<uint32_t> DataPlaneEngine::Seal(const CallKey&, absl::Span<const uint8_t>,
                                                        absl::Span<const uint8_t>, std::string&);
template absl::StatusOr<uint32_t> DataPlaneEngine::Open(const CallKey&, absl::Span<const uint8_t>,
                                                        absl::Span<const uint8_t>,
                                                        crypto::OutputBytes&);
template absl::StatusOr<uint32_t> DataPlaneEngine::Open(const CallKey&, absl::Span<const uint8_t>,
                                                        absl::Span<const uint8_t>, std::string&);
template absl::StatusOr<Rewrapped> DataPlaneEngine::Rewrap(const CallKey&,
                                                           absl::Span<const uint8_t>,
                                                           absl::Span<const uint8_t>,
                                                           crypto::OutputBytes&);
template absl::StatusOr<Rewrapped> DataPlaneEngine::Rewrap(const CallKey&,
                                                           absl::Span<const uint8_t>,
                                                           absl::Span<const uint8_t>, std::string&);

absl::StatusOr<std::unique_ptr<crypto::StreamSealer>> DataPlaneEngine::NewStreamSealer(
    const CallKey& key, absl::Span<const uint8_t> aad, uint32_t segment_bytes,
    uint32_t& key_version) {
  absl::StatusOr<const KeyEntry*> usable =
      UsableKey(key.keys.For(key.tenant, key.name, /*version=*/0), key.tenant, key.name);
  if (!usable.ok()) return usable.status();
  const KeyEntry* entry = *usable;
  auto primary = entry->versions.find(entry->primary_version);
  if (primary == entry->versions.end() || primary->second.material == nullptr ||
      primary->second.material->empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("key \"", key.name, "\" has no usable primary version"));
  }
  key_version = entry->primary_version;
  return crypto::StreamSealer::Create(primary->second.material->span(),
                                      {key.tenant, key.name, entry->primary_version}, aad,
                                      segment_bytes);
}

absl::StatusOr<std::unique_ptr<crypto::StreamOpener>> DataPlaneEngine::NewStreamOpener(
    const CallKey& key, absl::Span<const uint8_t> aad) {
  absl::StatusOr<const KeyEntry*> usable =
      UsableKey(key.keys.For(key.tenant, key.name, /*version=*/0), key.tenant, key.name);
  if (!usable.ok()) return usable.status();
  if (absl::Status s = failure_limit_.Check(**usable); !s.ok()) return s;
  // The opener keeps its own copy of the call's view, and the snapshot the stream
  // began with, whose entry still opens should the key be gone from a fresher one.
  auto lookup = [keys = key.keys, start = key.keys.shared(), entry = *usable, tenant = key.tenant,
                 name = key.name](uint32_t version) mutable -> absl::StatusOr<crypto::SecretBytes> {
    const KeyEntry* current = keys.For(tenant, name, version).FindKey(tenant, name);
    if (absl::Status s = NotKnownYet(CallKey{keys, tenant, name}, version); !s.ok()) return s;
    if (current == nullptr) current = entry;
    if (current->disabled) return KeyDisabled(name);
    absl::StatusOr<const KeyVersionEntry*> found = current->VersionForOpen(version);
    if (!found.ok()) return UnknownVersionIsDecryptionFailure(found.status());
    return (*found)->material->Clone();
  };
  return crypto::StreamOpener::Create(key.tenant, key.name, aad, std::move(lookup));
}

void DataPlaneEngine::RecordStreamDecryptionFailure(const CallKey& key) {
  if (const KeyEntry* entry = key.keys.get().FindKey(key.tenant, key.name)) CountFailure(*entry);
}

void DataPlaneEngine::CountFailure(const KeyEntry& entry) {
  if (failure_limit_.RecordFailure(entry)) {
    Log("decryption_limit_reached", "warning")
        .Add("tenant", entry.tenant)
        .Add("key", entry.name)
        .Add("primary_version", int64_t{entry.primary_version})
        .Add("detail",
             "opens with this key are refused until it is rotated or the "
             "server restarts");
  }
}

}  // namespace sealbox::server
