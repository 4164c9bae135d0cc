// The armv8_neon kernel: register-S-box AES in counter mode, four blocks per pass
// (aes_neon.h), then GHASH over the same stretch of ciphertext, eight blocks per
// reduction (ghash_neon.h). The two run as separate passes over stretches of
// kStretchBlocks blocks, short enough that the second pass reads from L1.
#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

#include "crypto/armv8_neon/aes_neon.h"
#include "crypto/armv8_neon/armv8_neon.h"
#include "crypto/armv8_neon/ghash_neon.h"
#include "crypto/kernel/kernel.h"
#include "crypto/secret/secure_wipe.h"

namespace sealbox::crypto::kernel {
namespace {

using armv8_neon::AesKey;
using armv8_neon::GhashKey;

constexpr size_t kStretchBlocks = 128;  // 2 KiB

// What this kernel keeps in KeySchedule::bytes.
struct Schedule {
  AesKey aes;
  GhashKey ghash;
};
static_assert(sizeof(Schedule) <= kMaxKeyScheduleBytes);
static_assert(alignof(Schedule) <= alignof(KeySchedule));
static_assert(std::is_trivially_destructible_v<Schedule>);

const Schedule& View(const KeySchedule& schedule) {
  return *std::launder(reinterpret_cast<const Schedule*>(schedule.bytes));
}

// Once per entry point: overwrites the stack its callees just left, where the
// compiler spilled cipher state and keystream. A fresh frame at the same depth,
// larger than any callee's (under 1 KiB, see -fstack-usage), covers them.
[[gnu::noinline]] void WipeCalleeStack() {
  uint8_t area[2048];
  SecureWipe(area, sizeof(area));
}

void ExpandKey(const uint8_t* key, size_t key_bytes, KeySchedule* schedule) {
  Schedule* s = new (schedule->bytes) Schedule;
  armv8_neon::ExpandAesKey(key, key_bytes, &s->aes);
  uint8_t h[16] = {};
  armv8_neon::AesEncryptBlock(s->aes, h, h);  // H = AES_K(0^128)
  armv8_neon::InitGhashKey(h, &s->ghash);
  SecureWipe(h, sizeof(h));
  WipeCalleeStack();
}

void EncryptBlock(const KeySchedule& schedule, const uint8_t in[16], uint8_t out[16]) {
  armv8_neon::AesEncryptBlock(View(schedule).aes, in, out);
  WipeCalleeStack();
}

void Ghash(const KeySchedule& schedule, uint8_t x[16], const uint8_t* in, size_t blocks) {
  armv8_neon::GhashBlocks(View(schedule).ghash, x, in, blocks);
  WipeCalleeStack();
}

void SealBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16], const uint8_t* in,
                uint8_t* out, size_t blocks) {
  const Schedule& s = View(schedule);
  while (blocks > 0) {
    const size_t n = std::min(blocks, kStretchBlocks);
    armv8_neon::AesCtr(s.aes, counter, in, out, n);
    armv8_neon::GhashBlocks(s.ghash, x, out, n);
    in += 16 * n;
    out += 16 * n;
    blocks -= n;
  }
  WipeCalleeStack();
}

// GHASH reads each stretch of ciphertext before counter mode overwrites it (when
// `in == out`).
void OpenBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16], const uint8_t* in,
                uint8_t* out, size_t blocks) {
  const Schedule& s = View(schedule);
  while (blocks > 0) {
    const size_t n = std::min(blocks, kStretchBlocks);
    armv8_neon::GhashBlocks(s.ghash, x, in, n);
    armv8_neon::AesCtr(s.aes, counter, in, out, n);
    in += 16 * n;
    out += 16 * n;
    blocks -= n;
  }
  WipeCalleeStack();
}

}  // namespace

const Kernel kArmv8NeonKernel = {
    /*name=*/"armv8_neon",
    /*constant_time=*/true,
    /*expand_key=*/ExpandKey,
    /*encrypt_block=*/EncryptBlock,
    /*ghash=*/Ghash,
    /*seal_blocks=*/SealBlocks,
    /*open_blocks=*/OpenBlocks,
    /*schedule_bytes=*/sizeof(Schedule),
};

}  // namespace sealbox::crypto::kernel
