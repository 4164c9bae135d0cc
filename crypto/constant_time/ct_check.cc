// Runs Seal and Open on one implementation with the key, the plaintext and the AAD
// marked undefined for valgrind's memcheck. Any branch or memory index that depends
// on them is then reported as a "use of uninitialised value", so running this under
// `valgrind --error-exitcode=...` proves (for the paths exercised) that the code is
// constant time in the sense that matters for cache and branch side channels.
//
// `leak` adds a deliberate branch on the sealed output, which must be reported: it
// shows that memcheck carries undefinedness through the implementation's
// instructions (tbl, pmull, aese, ...) instead of losing it, which would make any
// kernel look clean.
//
// Usage: ct_check IMPLEMENTATION [leak]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <valgrind/memcheck.h>

#include "crypto/aes_gcm.h"

namespace {

using sealbox::crypto::ExpandedKey;

void Secret(void* data, size_t size) { VALGRIND_MAKE_MEM_UNDEFINED(data, size); }

// Exercises every path of the mode layer: both J0 paths (12-byte and other IVs),
// whole and partial AAD blocks, whole and partial text blocks, in place and not.
volatile int sink;

bool CheckOneKeySize(const std::string& implementation, size_t key_bytes, bool leak) {
  std::vector<uint8_t> key(key_bytes);
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i * 7 + 1);
  Secret(key.data(), key.size());
  auto expanded = ExpandedKey::Create(key, implementation);
  if (!expanded.ok()) {
    std::fprintf(stderr, "ct_check: %s\n", expanded.status().ToString().c_str());
    return false;
  }
  for (size_t iv_size : {12, 1, 16, 60}) {
    // Up to 4805 bytes: past every kernel's widest main loop and bulk stretch.
    for (size_t text_size : {0, 5, 16, 100, 257, 4805}) {
      std::vector<uint8_t> iv(iv_size, 0x42);
      std::vector<uint8_t> aad(text_size % 37, 0x17);
      std::vector<uint8_t> plaintext(text_size, 0x5a);
      std::vector<uint8_t> ciphertext(text_size);
      std::vector<uint8_t> tag(16);
      Secret(aad.data(), aad.size());
      Secret(plaintext.data(), plaintext.size());
      if (!(*expanded)
               ->Seal(iv, aad, plaintext, absl::MakeSpan(ciphertext),
                      absl::MakeSpan(tag))
               .ok()) {
        return false;
      }
      if (leak) {
        if (tag[0] == 0x17) sink = 1;
        if (text_size > 0 && ciphertext[text_size - 1] == 0x17) sink = 2;
      }
      // Open the real ciphertext, in place: the verdict is the one declassified value.
      std::vector<uint8_t> opened = ciphertext;
      if (!(*expanded)->Open(iv, aad, opened, tag, absl::MakeSpan(opened)).ok()) {
        return false;
      }
      // And a forged one, so the failure path (wipe) runs too.
      tag[0] ^= 1;
      std::vector<uint8_t> rejected(text_size);
      (void)(*expanded)->Open(iv, aad, ciphertext, tag, absl::MakeSpan(rejected));
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool leak = argc == 3 && std::string(argv[2]) == "leak";
  if (argc != 2 && !leak) {
    std::fprintf(stderr, "usage: ct_check IMPLEMENTATION [leak]\n");
    return 2;
  }
  if (!RUNNING_ON_VALGRIND) {
    std::fprintf(stderr, "ct_check: not under valgrind; this check proves nothing\n");
    return 2;
  }
  for (size_t key_bytes : {16, 24, 32}) {
    if (!CheckOneKeySize(argv[1], key_bytes, leak)) {
      std::fprintf(stderr, "ct_check: %s failed to run\n", argv[1]);
      return 2;
    }
  }
  std::printf("ct_check: %s ran all paths\n", argv[1]);
  return 0;
}
