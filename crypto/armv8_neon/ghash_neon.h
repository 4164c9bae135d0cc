// Constant-time GHASH (SP 800-38D 6.4) with plain ARMv8 NEON: 128 x 128-bit
// carry-less products built from 8 x 8-bit polynomial multiplies (pmull .8b), for
// cores without the 64-bit PMULL of the crypto extensions.
#ifndef SEALBOX_CRYPTO_ARMV8_NEON_GHASH_NEON_H_
#define SEALBOX_CRYPTO_ARMV8_NEON_GHASH_NEON_H_

#include <cstddef>
#include <cstdint>

namespace sealbox::crypto::kernel::armv8_neon {

// Blocks per reduction: a group of 8 blocks is multiplied by H^8..H^1 and summed
// before one reduction.
inline constexpr int kGhashGroup = 8;

// One power of H, bit-reversed in each byte (so that its 16 bytes, little-endian,
// are the polynomial with x^i at bit i) and cut for the byte multiplier: h0 and h1
// are its low and high 8 bytes, hm = h0 ^ h1, and rot_r(v) is v with its 8 bytes
// rotated down by r (byte k becomes byte k + r mod 8).
//   t[0] = h0 | h1, t[r] = rot_r(h0) | rot_r(h1) for r = 1..4,
//   t[5] = hm | rot_4(hm), t[6] = rot_1(hm) | rot_2(hm), t[7] = rot_3(hm) | hm.
struct GhashPower {
  alignas(16) uint8_t t[8][16];
};

// powers[i] is H^(kGhashGroup - i): the group loop walks forward through it.
struct GhashKey {
  GhashPower powers[kGhashGroup];
};

// Precomputes H^1..H^8 from h = AES_K(0^128).
void InitGhashKey(const uint8_t h[16], GhashKey* key);

// For each of `blocks` 16-byte blocks of `in`: x = (x ^ block) * H.
void GhashBlocks(const GhashKey& key, uint8_t x[16], const uint8_t* in, size_t blocks);

}  // namespace sealbox::crypto::kernel::armv8_neon

// The hot loop (ghash_neon_core.S): one group of kGhashGroup blocks (128 bytes)
// per iteration, `groups` of them, with a C name so that disassembly and
// cycle-model scripts find it.
extern "C" void armv8_neon_ghash_blocks(const sealbox::crypto::kernel::armv8_neon::GhashKey* key,
                                        uint8_t x[16], const uint8_t* in, size_t groups);

#endif  // SEALBOX_CRYPTO_ARMV8_NEON_GHASH_NEON_H_
