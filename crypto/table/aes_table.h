// AES encryption with T-tables (FIPS-197), for the table kernel only.
// NOT constant time: see table_kernel.cc.
#ifndef SEALBOX_CRYPTO_TABLE_AES_TABLE_H_
#define SEALBOX_CRYPTO_TABLE_AES_TABLE_H_

#include <cstddef>
#include <cstdint>

namespace sealbox::crypto::kernel::table {

inline constexpr int kMaxAesRounds = 14;

// FIPS-197's key schedule w[i]: each word is one column, row 0 in the top byte.
struct AesRoundKeys {
  uint32_t words[4 * (kMaxAesRounds + 1)];
  int rounds;  // 10, 12 or 14
};

// `key_bytes` is 16, 24 or 32 (the caller has checked).
void ExpandAesKey(const uint8_t* key, size_t key_bytes, AesRoundKeys* keys);

// out = AES_K(in); `in` may equal `out`.
void EncryptAesBlock(const AesRoundKeys& keys, const uint8_t in[16], uint8_t out[16]);

}  // namespace sealbox::crypto::kernel::table

#endif  // SEALBOX_CRYPTO_TABLE_AES_TABLE_H_
