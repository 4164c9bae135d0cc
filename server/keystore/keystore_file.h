// The keystore file's envelope: the KeystoreFile proto, encrypted under the KEK.
//
//   offset size
//   0      8    magic "SBXKEYS\n"
//   8      4    format version (u32 BE) = 1
//   12     8    generation (u64 BE): +1 per committed change
//   20     16   KEK fingerprint: HMAC-SHA256(KEK, "sealbox/v1/kek-fingerprint")[0:16]
//   36     16   salt, random per write
//   52     12   nonce, random per write
//   64     n    AES-256-GCM ciphertext of the serialized sealbox.internal.KeystoreFile
//   64+n   16   tag
//
// Wrapping key = HKDF-SHA256(ikm = KEK, salt, info = "sealbox/v1/keystore"): a fresh
// key per write, so nonces never pile up under one key however often it is written.
// GCM AAD = the 64 header bytes, so the generation and fingerprint are authenticated.
// The fingerprint tells a wrong KEK apart from a damaged file (a damaged fingerprint
// itself reads as a wrong KEK). The generation sits in the clear so a replica can
// tell a changed file from its first 64 bytes.
#ifndef SEALBOX_SERVER_KEYSTORE_KEYSTORE_FILE_H_
#define SEALBOX_SERVER_KEYSTORE_KEYSTORE_FILE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/secret/secret_bytes.h"
#include "sealbox/internal/keystore_file.pb.h"
#include "server/keystore/kek.h"

namespace sealbox::server {

inline constexpr size_t kKeystoreHeaderBytes = 64;

// The decrypted file. Wipes its key material when it goes away.
struct KeystoreContents {
  KeystoreContents() = default;
  KeystoreContents(KeystoreContents&&) = default;
  KeystoreContents& operator=(KeystoreContents&&) = default;
  ~KeystoreContents();

  uint64_t generation = 0;
  internal::KeystoreFile file;
};

// Encrypts `contents` into an envelope.
absl::StatusOr<std::vector<uint8_t>> SealKeystore(const Kek& kek, const KeystoreContents& contents);

// Decrypts an envelope. FAILED_PRECONDITION "keystore <path> was written with a
// different KEK", or DATA_LOSS "keystore <path> is damaged" (bad magic, truncated,
// unknown version, failed tag, unparsable proto). `path` only names the file.
absl::StatusOr<KeystoreContents> OpenKeystore(const Kek& kek, absl::Span<const uint8_t> envelope,
                                              absl::string_view path);

// Whether an envelope's header carries `kek`'s fingerprint: which of two KEKs a
// file is under while the KEK is being changed. False for a malformed header.
bool WrittenWithKek(const Kek& kek, absl::Span<const uint8_t> envelope);

// The generation in a header, without authenticating it (Open does that); for a
// cheap "did it change?" check. Fails like OpenKeystore on a bad header.
absl::StatusOr<uint64_t> PeekGeneration(absl::Span<const uint8_t> envelope, absl::string_view path);

// Wipes one version's key material in place (protobuf does not wipe what it frees).
void WipeMaterial(internal::KeyVersion& version);
// Wipes an import key's private half in place.
void WipeImportKey(internal::ImportKeyPair& pair);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_KEYSTORE_FILE_H_
