// AES-GCM through OpenSSL's EVP interface (Debian's libssl): the reference the
// differential fuzzer holds every sealbox implementation to.
#ifndef SEALBOX_TESTS_FUZZ_OPENSSL_REFERENCE_H_
#define SEALBOX_TESTS_FUZZ_OPENSSL_REFERENCE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace sealbox::fuzz {

// Seals `plaintext`; false if OpenSSL refuses (it should not for these inputs).
bool OpenSslSeal(absl::Span<const uint8_t> key, absl::Span<const uint8_t> iv,
                 absl::Span<const uint8_t> aad, absl::Span<const uint8_t> plaintext,
                 size_t tag_bytes, std::vector<uint8_t>* ciphertext, std::vector<uint8_t>* tag);

// True when the tag verifies; `plaintext` then holds the decryption.
bool OpenSslOpen(absl::Span<const uint8_t> key, absl::Span<const uint8_t> iv,
                 absl::Span<const uint8_t> aad, absl::Span<const uint8_t> ciphertext,
                 absl::Span<const uint8_t> tag, std::vector<uint8_t>* plaintext);

}  // namespace sealbox::fuzz

#endif  // SEALBOX_TESTS_FUZZ_OPENSSL_REFERENCE_H_
