// The "table" kernel: T-table AES (aes_table.cc) with Shoup's 4-bit GHASH
// (ghash_4bit.cc), the classic fast software fallback.
//
// NOT CONSTANT TIME. Both halves index memory with secret values: AES rounds look
// up tables at key- and data-dependent offsets, and GHASH looks up multiples of H
// by data nibbles. Which cache lines were touched leaks through timing to any
// attacker sharing the CPU (another process, VM or hyperthread), enough to recover
// the key. Dispatch therefore never picks this kernel automatically; it runs only
// when an operator names it ("table"), for hosts where speed matters more.
#include "crypto/table/table.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

#include "crypto/byte_order/byte_order.h"
#include "crypto/kernel/kernel.h"
#include "crypto/secret/secure_wipe.h"
#include "crypto/table/aes_table.h"
#include "crypto/table/ghash_4bit.h"

namespace sealbox::crypto::kernel {
namespace {

// What this kernel keeps in KeySchedule::bytes.
struct TableSchedule {
  table::GhashTable ghash;  // multiples of H
  table::AesRoundKeys aes;  // encryption round keys
};
static_assert(sizeof(TableSchedule) <= kMaxKeyScheduleBytes);
static_assert(alignof(TableSchedule) <= alignof(KeySchedule));
static_assert(std::is_trivially_destructible_v<TableSchedule>,
              "the mode layer frees the schedule without destroying it");

const TableSchedule& Layout(const KeySchedule& schedule) {
  return *std::launder(reinterpret_cast<const TableSchedule*>(schedule.bytes));
}

// Blocks of keystream made before they are used: enough for the CPU to overlap
// independent AES blocks, small enough to stay in L1 beside the tables.
constexpr size_t kBatchBlocks = 8;

void ExpandKey(const uint8_t* key, size_t key_bytes, KeySchedule* schedule) {
  TableSchedule* layout = new (schedule->bytes) TableSchedule;
  table::ExpandAesKey(key, key_bytes, &layout->aes);
  uint8_t h[kBlockBytes] = {};
  table::EncryptAesBlock(layout->aes, h, h);  // H = AES_K(0^128)
  table::BuildGhashTable(h, &layout->ghash);
  SecureWipe(h, sizeof(h));
}

void EncryptBlock(const KeySchedule& schedule, const uint8_t in[16], uint8_t out[16]) {
  table::EncryptAesBlock(Layout(schedule).aes, in, out);
}

void Ghash(const KeySchedule& schedule, uint8_t x[16], const uint8_t* in, size_t blocks) {
  table::GhashBlocks(Layout(schedule).ghash, x, in, blocks);
}

// CTR over whole blocks, batch by batch. GHASH takes the ciphertext: `out` after
// encrypting when sealing, `in` before decrypting when opening (in may be out).
void CryptBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16], const uint8_t* in,
                 uint8_t* out, size_t blocks, bool seal) {
  const TableSchedule& layout = Layout(schedule);
  struct {
    uint8_t counter_block[kBlockBytes];
    uint8_t keystream[kBatchBlocks * kBlockBytes];
  } scratch;
  std::memcpy(scratch.counter_block, counter, kBlockBytes);
  // inc32: only the low 32 bits count, wrapping; the upper 96 stay as they are.
  uint32_t count = LoadBigEndian32(counter + 12);

  while (blocks > 0) {
    const size_t n = std::min(blocks, kBatchBlocks);
    const size_t bytes = n * kBlockBytes;
    for (size_t i = 0; i < n; ++i) {
      StoreBigEndian32(count++, scratch.counter_block + 12);
      table::EncryptAesBlock(layout.aes, scratch.counter_block,
                             scratch.keystream + i * kBlockBytes);
    }
    if (!seal) table::GhashBlocks(layout.ghash, x, in, n);
    for (size_t i = 0; i < bytes; ++i) out[i] = in[i] ^ scratch.keystream[i];
    if (seal) table::GhashBlocks(layout.ghash, x, out, n);
    in += bytes;
    out += bytes;
    blocks -= n;
  }

  StoreBigEndian32(count, counter + 12);
  SecureWipe(&scratch, sizeof(scratch));
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

const Kernel kTableKernel = {
    /*name=*/"table",
    /*constant_time=*/false,
    ExpandKey,
    EncryptBlock,
    Ghash,
    SealBlocks,
    OpenBlocks,
    /*schedule_bytes=*/sizeof(TableSchedule),
};

}  // namespace sealbox::crypto::kernel
