// Runs sealbox's secret-handling code on one implementation with every secret
// marked undefined for valgrind's memcheck: key material, plaintext and AAD. Any
// branch or memory index that depends on them is then reported as a "use of
// uninitialised value", so running this under `valgrind --error-exitcode=...` proves
// (for the paths exercised) that the code is constant time in the sense that matters
// for cache and branch side channels. Only Open's verdict is declassified (in the
// mode layer), since acting on it is the point.
//
// Paths, each over AES-128/192/256 (the formats take 16- and 32-byte material):
//   mode layer  Seal and Open: both J0 paths (12-byte and other IVs), whole and
//               partial AAD and text blocks, in place and not, every tag length,
//               and Open's failure path (tag mismatch, then the wipe).
//   hkdf        HKDF-SHA256 of secret key material, one and several output blocks.
//   unary       EpochSubkey: derivation, Seal, Open, and Open of a forged tag.
//   stream      StreamSealer and StreamOpener: partial and whole segments, the
//               direct path for whole segments, and a forged last segment.
// The formats create their keys with the default implementation, which the
// SEALBOX_CRYPTO_IMPL variable set here makes the one under test.
//
// CONTROL, optional, adds a deliberate leak that must be reported; together they
// show memcheck carries undefinedness through every step instead of losing it
// (which would make any code look clean):
//   leak         branches on the mode layer's output: undefinedness survives the
//                implementation's instructions (tbl, pmull, aese, ...).
//   subkey_leak  branches on the tag of a unary message whose only secret is the key
//                material: it survives OpenSSL's HMAC into the subkey, and the
//                expansion of that subkey.
// The build target ct_check_early_exit_tag_compare is this program, mode layer only,
// linked with a mode layer whose tag compare stops at the first differing byte: the
// control for the compare itself.
//
// Usage: ct_check IMPLEMENTATION [leak|subkey_leak]
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include <valgrind/memcheck.h>

#include "crypto/aes_gcm.h"
#ifndef SEALBOX_CT_CHECK_MODE_LAYER_ONLY
#include "crypto/format/hkdf.h"
#include "crypto/format/stream.h"
#include "crypto/format/unary.h"
#include "crypto/secret/secret_bytes.h"
#endif

namespace {

using sealbox::crypto::ExpandedKey;

void Secret(void* data, size_t size) { VALGRIND_MAKE_MEM_UNDEFINED(data, size); }

std::vector<uint8_t> SecretSequence(size_t size, uint8_t first) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(first + i * 7);
  Secret(bytes.data(), bytes.size());
  return bytes;
}

// A deliberate leak: branches on `byte`.
volatile int sink;
void BranchOn(uint8_t byte) {
  if (byte == 0x17) sink = 1;
}

bool Failed(const char* what) {
  std::fprintf(stderr, "ct_check: %s did not behave as expected\n", what);
  return false;
}

bool CheckModeLayer(const std::string& implementation, bool leak) {
  constexpr size_t kTagSizes[] = {16, 15, 14, 13, 12, 8, 4};
  size_t round = 0;
  for (size_t key_bytes : {16, 24, 32}) {
    const std::vector<uint8_t> key = SecretSequence(key_bytes, 1);
    for (size_t iv_size : {12, 1, 16, 60}) {
      // Up to 4805 bytes: past every kernel's widest main loop and bulk stretch.
      for (size_t text_size : {0, 5, 16, 100, 257, 4805}) {
        const size_t tag_size = kTagSizes[round++ % std::size(kTagSizes)];
        // The tag length is the key's: one expansion per length.
        auto expanded = ExpandedKey::CreateWithTagBytes(key, tag_size, implementation);
        if (!expanded.ok()) {
          std::fprintf(stderr, "ct_check: %s\n", expanded.status().ToString().c_str());
          return false;
        }
        const std::vector<uint8_t> iv(iv_size, 0x42);
        const std::vector<uint8_t> aad = SecretSequence(text_size % 37, 0x17);
        const std::vector<uint8_t> plaintext = SecretSequence(text_size, 0x5a);
        std::vector<uint8_t> ciphertext(text_size);
        std::vector<uint8_t> tag(tag_size);
        if (!(*expanded)
                 ->Seal(iv, aad, plaintext, absl::MakeSpan(ciphertext), absl::MakeSpan(tag))
                 .ok()) {
          return Failed("Seal");
        }
        if (leak) {
          BranchOn(tag[0]);
          if (text_size > 0) BranchOn(ciphertext[text_size - 1]);
        }
        // Open the real ciphertext, in place: the verdict is the one declassified
        // value.
        std::vector<uint8_t> opened = ciphertext;
        if (!(*expanded)->Open(iv, aad, opened, tag, absl::MakeSpan(opened)).ok()) {
          return Failed("Open");
        }
        // And a forged one, differing in the last byte, so the compare must reach
        // it and the failure path (wipe) runs.
        tag[tag_size - 1] ^= 1;
        std::vector<uint8_t> rejected(text_size);
        if ((*expanded)->Open(iv, aad, ciphertext, tag, absl::MakeSpan(rejected)).ok()) {
          return Failed("Open of a forged tag");
        }
      }
    }
  }
  return true;
}

#ifndef SEALBOX_CT_CHECK_MODE_LAYER_ONLY

namespace crypto = sealbox::crypto;

bool CheckHkdf() {
  const std::vector<uint8_t> salt(32, 0x33);
  const std::vector<uint8_t> info(40, 0x44);
  for (size_t ikm_bytes : {16, 32}) {
    const std::vector<uint8_t> ikm = SecretSequence(ikm_bytes, 3);
    for (size_t length : {16, 32, 100}) {
      if (!crypto::HkdfSha256(ikm, salt, info, length).ok()) return Failed("HKDF");
    }
  }
  return true;
}

bool CheckUnary(bool subkey_leak) {
  const crypto::KeyContext context = {"tenant", "key", 7};
  crypto::EpochId epoch_id;
  epoch_id.fill(0x61);
  for (size_t material_bytes : {16, 32}) {
    const std::vector<uint8_t> material = SecretSequence(material_bytes, 9);
    auto subkey = crypto::EpochSubkey::Derive(material, context, epoch_id);
    if (!subkey.ok()) return Failed("EpochSubkey::Derive");
    if (subkey_leak) {
      // Nothing but the material is secret here.
      auto sealed = (*subkey)->Seal({}, {});
      if (!sealed.ok()) return Failed("unary Seal");
      BranchOn(sealed->back());
    }
    for (size_t text_size : {0, 1, 16, 33, 300}) {
      const std::vector<uint8_t> plaintext = SecretSequence(text_size, 0x21);
      const std::vector<uint8_t> aad = SecretSequence(text_size % 19, 0x71);
      auto sealed = (*subkey)->Seal(plaintext, aad);
      if (!sealed.ok()) return Failed("unary Seal");
      if (!(*subkey)->Open(*sealed, aad).ok()) return Failed("unary Open");
      sealed->back() ^= 1;
      if ((*subkey)->Open(*sealed, aad).ok()) return Failed("unary Open of a forgery");
    }
  }
  return true;
}

// Feeds `data` in chunks of `chunk` bytes (and the rest) to `consume`.
template <typename Consume>
bool Feed(const std::vector<uint8_t>& data, size_t chunk, Consume consume) {
  for (size_t at = 0; at < data.size(); at += chunk) {
    const size_t n = std::min(chunk, data.size() - at);
    if (!consume(absl::MakeConstSpan(data).subspan(at, n)).ok()) return false;
  }
  return true;
}

bool CheckStream() {
  const crypto::KeyContext context = {"tenant", "key", 7};
  const std::vector<uint8_t> aad = SecretSequence(11, 0x15);
  crypto::StreamSalt salt;
  salt.fill(0x52);
  crypto::StreamNoncePrefix prefix;
  prefix.fill(0x53);
  constexpr size_t kSegment = crypto::kMinSegmentBytes;
  for (size_t material_bytes : {16, 32}) {
    const std::vector<uint8_t> material = SecretSequence(material_bytes, 5);
    // Empty, partial, whole segments (sent whole: the direct path) and a remainder.
    for (size_t text_size : {size_t{0}, size_t{100}, 2 * kSegment + 77}) {
      const std::vector<uint8_t> plaintext = SecretSequence(text_size, 0x2b);
      for (size_t chunk : {size_t{1000}, kSegment}) {
        auto sealer =
            crypto::StreamSealer::CreateForTesting(material, context, aad, kSegment, salt, prefix);
        if (!sealer.ok()) return Failed("StreamSealer::Create");
        std::vector<uint8_t> sealed;
        if (!Feed(plaintext, chunk,
                  [&](absl::Span<const uint8_t> c) { return (*sealer)->Update(c, sealed); }) ||
            !(*sealer)->Finish(sealed).ok()) {
          return Failed("stream seal");
        }
        for (bool forge : {false, true}) {
          if (forge) sealed.back() ^= 1;
          auto opener =
              crypto::StreamOpener::Create(context.tenant, context.key_name, aad,
                                           [&](uint32_t) -> absl::StatusOr<crypto::SecretBytes> {
                                             return crypto::SecretBytes(material);
                                           });
          std::vector<uint8_t> opened;
          const bool ok =
              Feed(sealed, chunk + 16,
                   [&](absl::Span<const uint8_t> c) { return opener->Update(c, opened); }) &&
              opener->Finish(opened).ok();
          if (ok == forge) return Failed("stream open");
        }
      }
    }
  }
  return true;
}

#endif  // SEALBOX_CT_CHECK_MODE_LAYER_ONLY

}  // namespace

int main(int argc, char** argv) {
  const std::string control = argc == 3 ? argv[2] : "";
  if (argc < 2 || argc > 3 || (argc == 3 && control != "leak" && control != "subkey_leak")) {
    std::fprintf(stderr, "usage: ct_check IMPLEMENTATION [leak|subkey_leak]\n");
    return 2;
  }
  if (!RUNNING_ON_VALGRIND) {
    std::fprintf(stderr, "ct_check: not under valgrind; this check proves nothing\n");
    return 2;
  }
  const std::string implementation = argv[1];
  bool ran = CheckModeLayer(implementation, control == "leak");
#ifndef SEALBOX_CT_CHECK_MODE_LAYER_ONLY
  // The formats take the default implementation: make it the one under test.
  setenv("SEALBOX_CRYPTO_IMPL", implementation.c_str(), /*overwrite=*/1);
  ran = ran && CheckHkdf() && CheckUnary(control == "subkey_leak") && CheckStream();
#endif
  if (!ran) {
    std::fprintf(stderr, "ct_check: %s failed to run\n", implementation.c_str());
    return 2;
  }
  std::printf("ct_check: %s ran all paths\n", implementation.c_str());
  return 0;
}
