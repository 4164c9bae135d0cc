// The keystore file loader: OpenKeystore under the fixed KEK, beside
// WrittenWithKek and PeekGeneration on the same bytes. A file that opens must
// carry the KEK's fingerprint and the generation PeekGeneration reads, and must
// survive SealKeystore and OpenKeystore again unchanged.
//
// Input: mode (1) | the rest.
//   mode bit 0 clear: the rest is an envelope, as read from disk.
//   mode bit 0 set:   the rest is a serialized sealbox.internal.KeystoreFile, sealed
//                     here first, so the fuzzer reaches what follows decryption
//                     (which it cannot reach through a tag it cannot forge).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "crypto/secret/secret_bytes.h"
#include "server/keystore/keystore_file.h"
#include "tests/fuzz/fixtures.h"
#include "tests/fuzz/fuzz_input.h"

namespace sealbox::fuzz {
namespace {

using server::KeystoreContents;

void Check(bool condition) {
  if (!condition) std::abort();
}

const server::Kek& Kek() {
  static const auto* kek = new server::Kek(*server::Kek::FromBytes(kKek));
  return *kek;
}

// `must_open`: the envelope was sealed here under the KEK, so it has to open.
void OpenEnvelope(absl::Span<const uint8_t> envelope, bool must_open) {
  const bool ours = server::WrittenWithKek(Kek(), envelope);
  const absl::StatusOr<uint64_t> peeked = server::PeekGeneration(envelope, "fuzz");
  absl::StatusOr<KeystoreContents> contents = server::OpenKeystore(Kek(), envelope, "fuzz");
  if (!contents.ok()) {
    Check(!must_open);
    const absl::StatusCode code = contents.status().code();
    Check(code == absl::StatusCode::kDataLoss || code == absl::StatusCode::kFailedPrecondition);
    return;
  }
  Check(ours);
  Check(peeked.ok() && *peeked == contents->generation);

  auto resealed = server::SealKeystore(Kek(), *contents);
  Check(resealed.ok());
  auto reopened = server::OpenKeystore(Kek(), *resealed, "fuzz");
  Check(reopened.ok());
  Check(reopened->generation == contents->generation);
  Check(reopened->file.SerializeAsString() == contents->file.SerializeAsString());
}

void OpenOne(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  const uint8_t mode = input.Byte();
  const absl::Span<const uint8_t> rest = input.Rest();
  if ((mode & 1) == 0) {
    OpenEnvelope(rest, /*must_open=*/false);
    return;
  }
  KeystoreContents contents;
  if (!contents.file.ParseFromArray(rest.data(), static_cast<int>(rest.size()))) return;
  contents.generation = mode >> 1;
  auto sealed = server::SealKeystore(Kek(), contents);
  Check(sealed.ok());
  OpenEnvelope(*sealed, /*must_open=*/true);
}

}  // namespace
}  // namespace sealbox::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sealbox::fuzz::OpenOne(data, size);
  return 0;
}
