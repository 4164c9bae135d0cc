// sealbox's AES-GCM (NIST SP 800-38D): the one header callers include.
//
//   auto key = ExpandedKey::Create(raw_key);            // fastest constant-time impl
//   key.value()->Seal(iv, aad, plaintext, ciphertext, tag);   // tag: 16 bytes
//   key.value()->Open(iv, aad, ciphertext, tag, plaintext);
//
// The tag length belongs to the key, fixed when it is expanded (16 bytes unless
// CreateWithTagBytes asks for less), as BoringSSL's EVP_AEAD_CTX fixes it: Open
// refuses a tag of any other length, so a caller handed a truncated tag cannot get a
// weaker check than the key was made for.
//
// An ExpandedKey holds the AES round keys and GHASH key material ready for use, so a
// message never pays for key setup. It is immutable after creation: any number of
// threads may Seal and Open with one key at once. It wipes itself on destruction.
#ifndef SEALBOX_CRYPTO_AES_GCM_H_
#define SEALBOX_CRYPTO_AES_GCM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/decryption_failure.h"

namespace sealbox::crypto {

namespace kernel {
struct Kernel;
struct KeySchedule;
}  // namespace kernel

// Default and largest tag length. SP 800-38D also allows 12..15, 8 and 4 bytes; the
// short ones weaken authentication and are accepted only when a caller asks.
inline constexpr size_t kMaxTagBytes = 16;

// GCM's limit on one message: 2^32 - 2 blocks of plaintext.
inline constexpr uint64_t kMaxPlaintextBytes = (uint64_t{1} << 36) - 32;

// AAD is limited to 2^61 - 1 bytes by the spec; a size_t on a 64-bit host cannot
// come close, so only the plaintext limit is checked at run time.

class ExpandedKey {
 public:
  // Expands a 16-, 24- or 32-byte AES key. `implementation` names one from
  // SupportedImplementations() ("portable", "table", ...); empty means: the value of
  // the environment variable SEALBOX_CRYPTO_IMPL if set, else the fastest
  // constant-time implementation this CPU runs.
  static absl::StatusOr<std::unique_ptr<ExpandedKey>> Create(absl::Span<const uint8_t> key,
                                                             absl::string_view implementation = "");

  // As Create, with tags of `tag_bytes`: 16, 15, 14, 13, 12, 8 or 4 (SP 800-38D).
  // The short ones weaken authentication; use them only where a protocol needs them.
  static absl::StatusOr<std::unique_ptr<ExpandedKey>> CreateWithTagBytes(
      absl::Span<const uint8_t> key, size_t tag_bytes, absl::string_view implementation = "");

  ExpandedKey(const ExpandedKey&) = delete;
  ExpandedKey& operator=(const ExpandedKey&) = delete;
  ~ExpandedKey();

  // Encrypts `plaintext` into `ciphertext` (same size; the same buffer for in-place
  // use, otherwise not overlapping) and writes the tag into `tag`, which must be
  // tag_bytes() long. `iv` may be any length >= 1 byte; 12 bytes is the fast path
  // and the recommended choice.
  absl::Status Seal(absl::Span<const uint8_t> iv, absl::Span<const uint8_t> aad,
                    absl::Span<const uint8_t> plaintext, absl::Span<uint8_t> ciphertext,
                    absl::Span<uint8_t> tag) const;

  // Verifies `tag` and decrypts `ciphertext` into `plaintext` (same size; in place or
  // not overlapping). The tag is checked in constant time. On any failure of
  // authentication, a tag that is not tag_bytes() long included, `plaintext` is wiped
  // and the one uniform error DecryptionFailedError() is returned: a caller never sees
  // unauthenticated plaintext.
  absl::Status Open(absl::Span<const uint8_t> iv, absl::Span<const uint8_t> aad,
                    absl::Span<const uint8_t> ciphertext, absl::Span<const uint8_t> tag,
                    absl::Span<uint8_t> plaintext) const;

  // The implementation this key runs on ("portable", "table", ...).
  absl::string_view implementation() const;

  // 16, 24 or 32.
  size_t key_bytes() const { return key_bytes_; }

  // The length of every tag this key makes and accepts.
  size_t tag_bytes() const { return tag_bytes_; }

 private:
  ExpandedKey(const kernel::Kernel* kernel, size_t key_bytes, size_t tag_bytes);

  const kernel::Kernel* kernel_;
  size_t key_bytes_;
  size_t tag_bytes_;
  // kernel_->schedule_bytes of secret memory, not the whole KeySchedule type.
  kernel::KeySchedule* schedule_;
};

// The implementation ExpandedKey::Create picks when none is named (honouring
// SEALBOX_CRYPTO_IMPL), e.g. for a server to report at startup.
absl::StatusOr<std::string> DefaultImplementation();

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_AES_GCM_H_
