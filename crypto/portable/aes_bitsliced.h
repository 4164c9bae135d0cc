// Constant-time AES encryption (FIPS-197), bitsliced over 128-bit words so that
// one pass of the round function encrypts eight blocks. GCM needs only the forward
// cipher, so there is no decryption.
#ifndef SEALBOX_CRYPTO_PORTABLE_AES_BITSLICED_H_
#define SEALBOX_CRYPTO_PORTABLE_AES_BITSLICED_H_

#include <cstddef>
#include <cstdint>

namespace sealbox::crypto::kernel::portable {

// One bit plane of eight AES states. Plane b holds bit b of all 128 state bytes:
// byte 4*r + c of the word is (row r, column c), and bit w of that byte belongs to
// block w. Each 32-bit lane is thus one row, so ShiftRows and MixColumns become
// lane and byte rotations. A GCC vector type: SSE2 on x86-64, NEON on Arm, plain
// 64-bit code elsewhere.
using BitPlane = uint32_t __attribute__((vector_size(16)));

inline constexpr size_t kAesBatchBlocks = 8;
inline constexpr size_t kAesBatchBytes = kAesBatchBlocks * 16;
inline constexpr int kAesMaxRounds = 14;

// Round keys already in bitsliced form (each replicated over the eight blocks), so
// nothing is recomputed per message. Rounds 1..Nr also carry the S-box's affine
// constant 0x63, which the S-box circuit leaves out.
struct AesRoundKeys {
  BitPlane planes[kAesMaxRounds + 1][8];
  int rounds;  // 10, 12 or 14
};

// Expands a 16-, 24- or 32-byte key. Constant time: SubWord runs on the bitsliced
// S-box.
void ExpandAesKey(const uint8_t* key, size_t key_bytes, AesRoundKeys* keys);

// Encrypts kAesBatchBlocks consecutive 16-byte blocks in place. Its stack frame
// is left holding cipher state; callers scrub it once per entry point.
void AesEncryptBatch(const AesRoundKeys& keys, uint8_t blocks[kAesBatchBytes]);

}  // namespace sealbox::crypto::kernel::portable

#endif  // SEALBOX_CRYPTO_PORTABLE_AES_BITSLICED_H_
