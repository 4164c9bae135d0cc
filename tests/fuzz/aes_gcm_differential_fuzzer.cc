// Every AES-GCM implementation this CPU supports against OpenSSL, on a key, IV,
// AAD and plaintext the input chooses: ciphertext and tag must match. Then one
// mutation of the ciphertext, tag, AAD or IV (or none), and Open must fail on
// every implementation exactly when OpenSSL's does, with the output wiped.
//
// Input: shape (1: bits 0-1 key size 16/24/32, bits 2-4 tag size, bits 5-7
// mutation) | IV length - 1 (1, mod 128: OpenSSL takes IVs of 1 to 128 bytes) | AAD length (1) |
// mutation position (u16 BE) | key | IV | AAD | plaintext (the rest). Short inputs are padded with
// zeros.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "crypto/aes_gcm.h"
#include "crypto/dispatch/dispatch.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/openssl_reference.h"

namespace sealbox::fuzz {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr size_t kKeySizes[] = {16, 24, 32, 32};
constexpr size_t kTagSizes[] = {16, 15, 14, 13, 12, 8, 4, 16};

// OpenSSL 3.0 refuses longer GCM IVs; sealbox takes any length.
constexpr size_t kMaxOpenSslIvBytes = 128;

enum Mutation { kNone, kCiphertext, kTag, kAad, kIv, kTruncate };

void Check(bool condition) {
  if (!condition) std::abort();
}

// `size` bytes of input, zero-padded when the input runs out.
Bytes Take(FuzzInput& input, size_t size) {
  const absl::Span<const uint8_t> taken = input.Bytes(size);
  Bytes bytes(taken.begin(), taken.end());
  bytes.resize(size, 0);
  return bytes;
}

// Flips one bit of `bytes` at `position` (or appends a byte to an empty one).
void Flip(Bytes& bytes, uint16_t position) {
  if (bytes.empty()) {
    bytes.push_back(static_cast<uint8_t>(position));
    return;
  }
  bytes[(position >> 3) % bytes.size()] ^= static_cast<uint8_t>(1u << (position & 7));
}

const std::vector<std::string>& Implementations() {
  static const auto* names = new std::vector<std::string>(crypto::SupportedImplementations());
  return *names;
}

void RunOne(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  const uint8_t shape = input.Byte();
  const size_t key_bytes = kKeySizes[shape & 3];
  const size_t tag_bytes = kTagSizes[(shape >> 2) & 7];
  const int mutation = (shape >> 5) % 6;
  const size_t iv_bytes = size_t{input.Byte()} % kMaxOpenSslIvBytes + 1;
  const size_t aad_bytes = input.Byte();
  const uint16_t position = input.U16();
  const Bytes key = Take(input, key_bytes);
  const Bytes iv = Take(input, iv_bytes);
  const Bytes aad = Take(input, aad_bytes);
  const absl::Span<const uint8_t> plaintext = input.Rest();

  Bytes want_ciphertext, want_tag;
  Check(OpenSslSeal(key, iv, aad, plaintext, tag_bytes, &want_ciphertext, &want_tag));

  // The mutated message, and OpenSSL's verdict on it.
  Bytes ciphertext = want_ciphertext, tag = want_tag, open_aad = aad, open_iv = iv;
  switch (mutation) {
    case kCiphertext:
      Flip(ciphertext, position);
      break;
    case kTag:
      Flip(tag, position);
      break;
    case kAad:
      Flip(open_aad, position);
      break;
    case kIv:
      Flip(open_iv, position);
      break;
    case kTruncate:
      if (!ciphertext.empty()) ciphertext.pop_back();
      break;
  }
  Bytes want_opened;
  const bool want_ok = OpenSslOpen(key, open_iv, open_aad, ciphertext, tag, &want_opened);
  Check(want_ok || mutation != kNone);

  for (const std::string& name : Implementations()) {
    auto expanded = crypto::ExpandedKey::CreateWithTagBytes(key, tag_bytes, name);
    Check(expanded.ok());
    Bytes sealed(plaintext.size()), sealed_tag(tag_bytes);
    Check((*expanded)
              ->Seal(iv, aad, plaintext, absl::MakeSpan(sealed), absl::MakeSpan(sealed_tag))
              .ok());
    Check(sealed == want_ciphertext);
    Check(sealed_tag == want_tag);

    Bytes opened(ciphertext.size(), 0xa5);  // anything but zeros, to see the wipe
    const absl::Status status =
        (*expanded)->Open(open_iv, open_aad, ciphertext, tag, absl::MakeSpan(opened));
    Check(status.ok() == want_ok);
    if (want_ok) {
      Check(opened == want_opened);
    } else {
      Check(crypto::IsDecryptionFailure(status));
      Check(std::all_of(opened.begin(), opened.end(), [](uint8_t b) { return b == 0; }));
    }
  }
}

}  // namespace
}  // namespace sealbox::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sealbox::fuzz::RunOne(data, size);
  return 0;
}
