// The stream decoder: StreamOpener fed arbitrary bytes, split into chunks where
// the input says. Checks that the verdict and plaintext do not depend on the
// chunking (the same bytes fed whole must give the same result), that errors are
// final, and that a stream that opens is exactly what StreamSealer makes from its
// plaintext with the header's salt and nonce prefix.
//
// Input: AAD length (1) | AAD | split count n (1, taken mod 16) | n chunk lengths
// (u16 BE each, used in turn; 0 is an empty Update) | stream bytes (the rest).
// Key versions: 1 = the AES-256 material, 2 = the AES-128 one, 3 = disabled
// (FAILED_PRECONDITION from the lookup), anything else NOT_FOUND.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "crypto/format/stream.h"
#include "crypto/secret/secret_bytes.h"
#include "tests/fuzz/fixtures.h"
#include "tests/fuzz/fuzz_input.h"

namespace sealbox::fuzz {
namespace {

using crypto::SecretBytes;

void Check(bool condition) {
  if (!condition) std::abort();
}

absl::StatusOr<SecretBytes> Material(uint32_t version) {
  switch (version) {
    case 1:
      return SecretBytes(absl::MakeConstSpan(kMaterial256));
    case 2:
      return SecretBytes(absl::MakeConstSpan(kMaterial128));
    case 3:
      return absl::FailedPreconditionError("key version 3 is disabled");
    default:
      return absl::NotFoundError("no such key version");
  }
}

struct Result {
  absl::Status status;
  std::vector<uint8_t> plaintext;
};

// Feeds `stream` in chunks of the given lengths, cycled (one chunk when none).
Result OpenInChunks(absl::Span<const uint8_t> aad, absl::Span<const uint8_t> stream,
                    const std::vector<uint16_t>& lengths) {
  auto opener = crypto::StreamOpener::Create(kTenant, kKeyName, aad, Material);
  Result result;
  size_t next = 0;
  // Bounded, so a list of zeros cannot loop for ever.
  for (size_t call = 0; result.status.ok() && call < 4 * stream.size() + 16; ++call) {
    if (stream.empty() && call > 0) break;
    const size_t n = lengths.empty()
                         ? stream.size()
                         : std::min<size_t>(lengths[next++ % lengths.size()], stream.size());
    result.status = opener->Update(stream.first(n), result.plaintext);
    stream.remove_prefix(n);
  }
  if (result.status.ok() && !stream.empty()) {
    result.status = opener->Update(stream, result.plaintext);
  }
  if (result.status.ok()) result.status = opener->Finish(result.plaintext);

  // Errors are final, and so is the end: nothing more is accepted.
  std::vector<uint8_t> more;
  const uint8_t byte = 0;
  const absl::Status after = opener->Update(absl::MakeConstSpan(&byte, 1), more);
  Check(!after.ok() && more.empty());
  if (!result.status.ok()) Check(after == result.status);
  return result;
}

void OpenOne(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  const absl::Span<const uint8_t> aad = input.Bytes(input.Byte());
  std::vector<uint16_t> lengths(input.Byte() % 16);
  for (uint16_t& length : lengths) length = input.U16();
  const absl::Span<const uint8_t> stream = input.Rest();

  const Result chunked = OpenInChunks(aad, stream, lengths);
  const Result whole = OpenInChunks(aad, stream, {});
  Check(chunked.status == whole.status);
  if (!chunked.status.ok()) return;
  Check(chunked.plaintext == whole.plaintext);

  // It opened: sealing its plaintext again with the header's salt and prefix must
  // give back the same stream.
  auto header = crypto::ParseStreamHeader(stream);
  Check(header.ok());
  crypto::StreamSalt salt;
  crypto::StreamNoncePrefix prefix;
  std::copy_n(stream.begin() + 9, salt.size(), salt.begin());
  std::copy_n(stream.begin() + 9 + salt.size(), prefix.size(), prefix.begin());
  auto material = Material(header->key_version);
  Check(material.ok());
  auto sealer = crypto::StreamSealer::CreateForTesting(
      material->span(), crypto::KeyContext{kTenant, kKeyName, header->key_version}, aad,
      header->segment_bytes, salt, prefix);
  Check(sealer.ok());
  std::vector<uint8_t> resealed;
  Check((*sealer)->Update(chunked.plaintext, resealed).ok());
  Check((*sealer)->Finish(resealed).ok());
  Check(resealed == std::vector<uint8_t>(stream.begin(), stream.end()));
}

}  // namespace
}  // namespace sealbox::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sealbox::fuzz::OpenOne(data, size);
  return 0;
}
