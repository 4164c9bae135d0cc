// The unary ciphertext parser and Open path: ParseUnaryHeader, then
// EpochSubkey::Open under the fixed key material, for the epoch and version the
// header names. A ciphertext that opens must be the one Seal makes for that
// plaintext at that nonce, so Open never accepts a second encoding.
//
// Input: flags (1: bit 0 picks the AES-128 material) | AAD length (1) | AAD |
// ciphertext (the rest).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "crypto/aes_gcm.h"
#include "crypto/byte_order/byte_order.h"
#include "crypto/format/unary.h"
#include "tests/fuzz/fixtures.h"
#include "tests/fuzz/fuzz_input.h"

namespace sealbox::fuzz {
namespace {

using crypto::EpochSubkey;

void Check(bool condition) {
  if (!condition) std::abort();
}

// The message counter of a nonce Seal can make (4 zero bytes || u64 BE), if it is one.
bool SealNonceCounter(absl::Span<const uint8_t> ciphertext, uint64_t* counter) {
  const uint8_t* nonce = ciphertext.data() + 1 + 4 + crypto::kEpochIdBytes;
  if (nonce[0] | nonce[1] | nonce[2] | nonce[3]) return false;
  *counter = crypto::LoadBigEndian64(nonce + 4);
  return true;
}

void OpenOne(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  const bool aes128 = input.Byte() & 1;
  const absl::Span<const uint8_t> aad = input.Bytes(input.Byte());
  const absl::Span<const uint8_t> ciphertext = input.Rest();
  const absl::Span<const uint8_t> material =
      aes128 ? absl::MakeConstSpan(kMaterial128) : absl::MakeConstSpan(kMaterial256);

  auto header = crypto::ParseUnaryHeader(ciphertext);
  if (!header.ok()) {
    Check(crypto::IsDecryptionFailure(header.status()));
    return;
  }
  Check(ciphertext.size() >= crypto::kUnaryOverheadBytes);
  const crypto::KeyContext context{kTenant, kKeyName, header->key_version};
  auto subkey = EpochSubkey::Derive(material, context, header->epoch_id);
  Check(subkey.ok());
  auto plaintext = (*subkey)->Open(ciphertext, aad);
  if (!plaintext.ok()) {
    Check(crypto::IsDecryptionFailure(plaintext.status()));
    return;
  }
  Check(plaintext->size() == ciphertext.size() - crypto::kUnaryOverheadBytes);

  // Sealing the plaintext again at the same nonce must give back the same bytes.
  uint64_t counter = 0;
  if (!SealNonceCounter(ciphertext, &counter) || counter >= crypto::kMaxMessagesPerEpoch) {
    return;
  }
  auto sealer = EpochSubkey::DeriveForTesting(material, context, header->epoch_id, counter);
  Check(sealer.ok());
  auto resealed = (*sealer)->Seal(*plaintext, aad);
  Check(resealed.ok());
  Check(std::vector<uint8_t>(ciphertext.begin(), ciphertext.end()) == *resealed);
}

}  // namespace
}  // namespace sealbox::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sealbox::fuzz::OpenOne(data, size);
  return 0;
}
