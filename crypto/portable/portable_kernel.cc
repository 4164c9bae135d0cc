// The portable kernel: bitsliced AES (aes_bitsliced.h) in counter mode, eight
// blocks per pass, and GHASH by multiplication with holes (ghash_ctmul.h), eight
// blocks per reduction.
#include <cstring>
#include <new>
#include <type_traits>

#include "crypto/byte_order/byte_order.h"
#include "crypto/kernel/kernel.h"
#include "crypto/portable/aes_bitsliced.h"
#include "crypto/portable/ghash_ctmul.h"
#include "crypto/portable/portable.h"
#include "crypto/secret/secure_wipe.h"

namespace sealbox::crypto::kernel {
namespace {

using portable::AesEncryptBatch;
using portable::GhashBlocks;
using portable::GhashElement;
using portable::kAesBatchBlocks;
using portable::kAesBatchBytes;

// What this kernel keeps in KeySchedule::bytes: round keys already bitsliced and
// H^1..H^8 already cut up for the multiplier.
struct Schedule {
  portable::AesRoundKeys aes;
  portable::GhashKey ghash;
};
static_assert(sizeof(Schedule) <= kMaxKeyScheduleBytes);
static_assert(alignof(Schedule) <= alignof(KeySchedule));
static_assert(std::is_trivially_destructible_v<Schedule>);

const Schedule& View(const KeySchedule& schedule) {
  return *std::launder(reinterpret_cast<const Schedule*>(schedule.bytes));
}

// out = a ^ b over `size` bytes (a multiple of 8); out may be a.
void XorBytes(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t size) {
  for (size_t i = 0; i < size; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    x ^= y;
    std::memcpy(out + i, &x, 8);
  }
}

// The counter blocks counter[0..11] || n + w for w = 0..7: GCM's inc32, wrapping
// modulo 2^32 without touching the upper 96 bits.
void CounterBlocks(const uint8_t counter[16], uint32_t n, uint8_t blocks[kAesBatchBytes]) {
  // Fully unrolled: AArch64 GCC otherwise counts the loop with n + w against n + 8,
  // a branch on the counter (secret when J0 comes from GHASH of a long IV).
  // Harmless, as the trip count never varies, but valgrind's check rightly flags it.
#pragma GCC unroll 8
  for (size_t w = 0; w < kAesBatchBlocks; ++w) {
    std::memcpy(blocks + 16 * w, counter, 12);
    StoreBigEndian32(n + static_cast<uint32_t>(w), blocks + 16 * w + 12);
  }
}

// Once per entry point: overwrites the stack its callees just left. Their frames
// (bitsliced AES state, GHASH sums, register spills) hold keystream and
// key-derived values that C++ cannot name. A fresh frame at the same depth,
// larger than any callee's (under 1 KiB at -O3, see -fstack-usage), covers them.
[[gnu::noinline]] void WipeCalleeStack() {
  uint8_t area[2048];
  SecureWipe(area, sizeof(area));
}

void ExpandKey(const uint8_t* key, size_t key_bytes, KeySchedule* schedule) {
  Schedule* s = new (schedule->bytes) Schedule;
  portable::ExpandAesKey(key, key_bytes, &s->aes);
  uint8_t batch[kAesBatchBytes] = {};
  AesEncryptBatch(s->aes, batch);  // H = AES_K(0^128), the first block
  portable::InitGhashKey(batch, &s->ghash);
  SecureWipe(batch, sizeof(batch));
  WipeCalleeStack();
}

void EncryptBlock(const KeySchedule& schedule, const uint8_t in[16], uint8_t out[16]) {
  uint8_t batch[kAesBatchBytes] = {};
  std::memcpy(batch, in, 16);
  AesEncryptBatch(View(schedule).aes, batch);
  std::memcpy(out, batch, 16);
  SecureWipe(batch, sizeof(batch));
  WipeCalleeStack();
}

void Ghash(const KeySchedule& schedule, uint8_t x[16], const uint8_t* in, size_t blocks) {
  GhashElement acc = portable::LoadGhashElement(x);
  GhashBlocks(View(schedule).ghash, &acc, in, blocks);
  portable::StoreGhashElement(acc, x);
  SecureWipe(&acc, sizeof(acc));
  WipeCalleeStack();
}

// CTR over whole blocks, eight per pass, with GHASH over the ciphertext: the
// output when sealing, the input when opening (read before `out` may overwrite it).
void CryptBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16], const uint8_t* in,
                 uint8_t* out, size_t blocks, bool seal) {
  const Schedule& s = View(schedule);
  GhashElement acc = portable::LoadGhashElement(x);
  uint32_t n = LoadBigEndian32(counter + 12);
  uint8_t keystream[kAesBatchBytes];
  while (blocks > 0) {
    const size_t m = blocks < kAesBatchBlocks ? blocks : kAesBatchBlocks;
    if (!seal) GhashBlocks(s.ghash, &acc, in, m);
    CounterBlocks(counter, n, keystream);
    AesEncryptBatch(s.aes, keystream);
    XorBytes(in, keystream, out, 16 * m);
    if (seal) GhashBlocks(s.ghash, &acc, out, m);
    n += static_cast<uint32_t>(m);
    in += 16 * m;
    out += 16 * m;
    blocks -= m;
  }
  StoreBigEndian32(n, counter + 12);
  portable::StoreGhashElement(acc, x);
  SecureWipe(keystream, sizeof(keystream));
  SecureWipe(&acc, sizeof(acc));
  WipeCalleeStack();
}

void SealBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16], const uint8_t* in,
                uint8_t* out, size_t blocks) {
  CryptBlocks(schedule, counter, x, in, out, blocks, /*seal=*/true);
}

void OpenBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16], const uint8_t* in,
                uint8_t* out, size_t blocks) {
  CryptBlocks(schedule, counter, x, in, out, blocks, /*seal=*/false);
}

}  // namespace

const Kernel kPortableKernel = {
    /*name=*/"portable",
    /*constant_time=*/true,
    /*expand_key=*/ExpandKey,
    /*encrypt_block=*/EncryptBlock,
    /*ghash=*/Ghash,
    /*seal_blocks=*/SealBlocks,
    /*open_blocks=*/OpenBlocks,
    /*schedule_bytes=*/sizeof(Schedule),
};

}  // namespace sealbox::crypto::kernel
