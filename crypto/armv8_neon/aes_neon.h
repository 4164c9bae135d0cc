// Constant-time AES encryption (FIPS-197) with plain ARMv8 NEON: the S-box is held
// in sixteen vector registers and read with tbl/tbx, so no memory access depends on
// the key or the data. For cores without the AES instructions.
#ifndef SEALBOX_CRYPTO_ARMV8_NEON_AES_NEON_H_
#define SEALBOX_CRYPTO_ARMV8_NEON_AES_NEON_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace sealbox::crypto::kernel::armv8_neon {

inline constexpr int kAesMaxRounds = 14;

// The S-box (256 bytes), then the tbl indices of ShiftRows and of ShiftRows
// followed by a rotation of each column by one row (16 each), as the loops load
// them; AesTables() returns them.
inline constexpr size_t kAesTablesBytes = 256 + 16 + 16;
const uint8_t* AesTables();

// Round keys as plain bytes in FIPS-197 order (round r is bytes 16r..16r+15), so
// AddRoundKey is one load and one XOR.
struct AesKey {
  alignas(16) uint8_t round_keys[kAesMaxRounds + 1][16];
  int rounds;  // 10, 12 or 14
};

// Expands a 16-, 24- or 32-byte key. SubWord goes through the same register
// S-box as the cipher, so the key schedule is constant time too.
void ExpandAesKey(const uint8_t* key, size_t key_bytes, AesKey* out);

// out = AES_K(in), one block; `in` may equal `out`.
void AesEncryptBlock(const AesKey& key, const uint8_t in[16], uint8_t out[16]);

// Counter mode over whole blocks: out = in ^ AES_K(counter), counter += 1 per block
// (inc32: the big-endian low 32 bits, wrapping). Any number of blocks; `in` may
// equal `out`. Leaves its stack holding keystream: callers scrub it.
void AesCtr(const AesKey& key, uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t blocks);

}  // namespace sealbox::crypto::kernel::armv8_neon

extern "C" {
// The tables (hidden: the assembly addresses them directly, also from a shared
// library).
__attribute__((visibility("hidden"))) extern const std::array<
    uint8_t, sealbox::crypto::kernel::armv8_neon::kAesTablesBytes>
    armv8_neon_aes_tables;

// The hot loops (aes_neon_core.S), one per key size, each encrypting four counter
// blocks per iteration (64 bytes), with C names so that disassembly and
// cycle-model scripts find them: `quads` (> 0 to do anything) is the number of
// 4-block groups, `round_keys` the AesKey::round_keys of that key size.
void armv8_neon_ctr128_blocks(const uint8_t* round_keys, uint8_t counter[16], const uint8_t* in,
                              uint8_t* out, size_t quads);
void armv8_neon_ctr192_blocks(const uint8_t* round_keys, uint8_t counter[16], const uint8_t* in,
                              uint8_t* out, size_t quads);
void armv8_neon_ctr256_blocks(const uint8_t* round_keys, uint8_t counter[16], const uint8_t* in,
                              uint8_t* out, size_t quads);
}

#endif  // SEALBOX_CRYPTO_ARMV8_NEON_AES_NEON_H_
