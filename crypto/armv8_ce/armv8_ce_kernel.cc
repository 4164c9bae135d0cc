// The armv8_ce kernels: thin C++ entry points over armv8_ce.S, which does all
// the work (key expansion included); nothing secret goes to the stack (the main
// loops keep only their public counter blocks there).
#include <cstddef>
#include <cstdint>

#include "crypto/armv8_ce/armv8_ce.h"
#include "crypto/kernel/kernel.h"

extern "C" {
void sealbox_armv8_ce_expand_key(const uint8_t* key, size_t key_bytes, uint8_t* schedule);
void sealbox_armv8_ce_encrypt_block(const uint8_t* schedule, const uint8_t* in, uint8_t* out);
void sealbox_armv8_ce_ghash(const uint8_t* schedule, uint8_t* x, const uint8_t* in, size_t blocks);
void sealbox_armv8_ce_ghash_eor3(const uint8_t* schedule, uint8_t* x, const uint8_t* in,
                                 size_t blocks);
void sealbox_armv8_ce_seal_blocks(const uint8_t* schedule, uint8_t* counter, uint8_t* x,
                                  const uint8_t* in, uint8_t* out, size_t blocks);
void sealbox_armv8_ce_open_blocks(const uint8_t* schedule, uint8_t* counter, uint8_t* x,
                                  const uint8_t* in, uint8_t* out, size_t blocks);
void sealbox_armv8_ce_seal_blocks_eor3(const uint8_t* schedule, uint8_t* counter, uint8_t* x,
                                       const uint8_t* in, uint8_t* out, size_t blocks);
void sealbox_armv8_ce_open_blocks_eor3(const uint8_t* schedule, uint8_t* counter, uint8_t* x,
                                       const uint8_t* in, uint8_t* out, size_t blocks);
}

namespace sealbox::crypto::kernel {
namespace {

// The end of armv8_ce.S's schedule layout: H's high^low at 656, 16 bytes.
constexpr size_t kScheduleBytes = 672;
static_assert(kScheduleBytes <= kMaxKeyScheduleBytes);

void ExpandKey(const uint8_t* key, size_t key_bytes, KeySchedule* schedule) {
  sealbox_armv8_ce_expand_key(key, key_bytes, schedule->bytes);
}

void EncryptBlock(const KeySchedule& schedule, const uint8_t in[16], uint8_t out[16]) {
  sealbox_armv8_ce_encrypt_block(schedule.bytes, in, out);
}

void Ghash(const KeySchedule& schedule, uint8_t x[16], const uint8_t* in, size_t blocks) {
  sealbox_armv8_ce_ghash(schedule.bytes, x, in, blocks);
}

void GhashEor3(const KeySchedule& schedule, uint8_t x[16], const uint8_t* in, size_t blocks) {
  sealbox_armv8_ce_ghash_eor3(schedule.bytes, x, in, blocks);
}

void SealBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16], const uint8_t* in,
                uint8_t* out, size_t blocks) {
  sealbox_armv8_ce_seal_blocks(schedule.bytes, counter, x, in, out, blocks);
}

void OpenBlocks(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16], const uint8_t* in,
                uint8_t* out, size_t blocks) {
  sealbox_armv8_ce_open_blocks(schedule.bytes, counter, x, in, out, blocks);
}

void SealBlocksEor3(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16],
                    const uint8_t* in, uint8_t* out, size_t blocks) {
  sealbox_armv8_ce_seal_blocks_eor3(schedule.bytes, counter, x, in, out, blocks);
}

void OpenBlocksEor3(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16],
                    const uint8_t* in, uint8_t* out, size_t blocks) {
  sealbox_armv8_ce_open_blocks_eor3(schedule.bytes, counter, x, in, out, blocks);
}

}  // namespace

const Kernel kArmv8CeKernel = {
    /*name=*/"armv8_ce",
    /*constant_time=*/true,
    /*expand_key=*/ExpandKey,
    /*encrypt_block=*/EncryptBlock,
    /*ghash=*/Ghash,
    /*seal_blocks=*/SealBlocks,
    /*open_blocks=*/OpenBlocks,
    /*schedule_bytes=*/kScheduleBytes,
};

const Kernel kArmv8CeEor3Kernel = {
    /*name=*/"armv8_ce_eor3",
    /*constant_time=*/true,
    /*expand_key=*/ExpandKey,
    /*encrypt_block=*/EncryptBlock,
    /*ghash=*/GhashEor3,
    /*seal_blocks=*/SealBlocksEor3,
    /*open_blocks=*/OpenBlocksEor3,
    /*schedule_bytes=*/kScheduleBytes,
};

}  // namespace sealbox::crypto::kernel
