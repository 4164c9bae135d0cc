// What the kernel unit tests share: hex and random-byte helpers, published
// vectors, and simple reference code (byte-wise AES, bit-by-bit GHASH, CTR) to
// check a kernel against. Independent of every kernel.
#ifndef SEALBOX_CRYPTO_TESTING_KERNEL_REFERENCE_H_
#define SEALBOX_CRYPTO_TESTING_KERNEL_REFERENCE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "crypto/kernel/kernel.h"

namespace sealbox::crypto::test {

using Bytes = std::vector<uint8_t>;

Bytes FromHex(const std::string& hex);
std::string ToHex(const uint8_t* data, size_t size);
std::string ToHex(const Bytes& data);
Bytes RandomBytes(std::mt19937& rng, size_t size);

// FIPS-197 Appendix C: one plaintext under 128-, 192- and 256-bit keys.
struct AesVector {
  const char* key;
  const char* plaintext;
  const char* ciphertext;
};
extern const AesVector kFips197AppendixC[3];

// McGrew and Viega, "The Galois/Counter Mode of Operation", test case `number`
// (1-4, 7, 8, 10, 13-16: those with a 96-bit IV). All fields hex.
struct GcmVector {
  std::string key, iv, aad, plaintext, ciphertext, tag;
};
const GcmVector& McGrewViegaCase(int number);

// GCM with a 96-bit IV put together from `kernel`'s parts, as the mode layer
// does. Returns ciphertext || tag.
Bytes KernelGcmSeal(const kernel::Kernel& kernel, const Bytes& key, const Bytes& iv,
                    const Bytes& aad, const Bytes& plaintext);

// One block of AES under a fixed key: a ReferenceAes or a kernel's encrypt_block.
using BlockCipher = std::function<void(const uint8_t in[16], uint8_t out[16])>;

// `kernel`'s encrypt_block under `schedule`, which must outlive the result.
BlockCipher KernelBlockCipher(const kernel::Kernel& kernel, const kernel::KeySchedule& schedule);

// The AES S-box computed from its definition (inverse in GF(2^8), affine map).
uint8_t ReferenceSbox(uint8_t x);

// Byte-oriented FIPS-197 AES.
class ReferenceAes {
 public:
  explicit ReferenceAes(const Bytes& key);
  void Encrypt(const uint8_t in[16], uint8_t out[16]) const;
  Bytes Encrypt(const Bytes& in) const;
  // Refers to *this, which must outlive the result.
  BlockCipher AsBlockCipher() const;

 private:
  int rounds_;
  Bytes w_;  // the expanded key
};

// SP 800-38D Algorithm 1, one bit at a time: x = (x ^ block) * h per block.
void ReferenceGhash(const uint8_t h[16], uint8_t x[16], const uint8_t* in, size_t blocks);

// inc32: adds one to the last 32 bits (big endian, modulo 2^32).
void Increment32(uint8_t counter[16]);

// seal_blocks' contract over whole blocks: out = in ^ E(counter), Increment32
// per block; then x absorbs out by ReferenceGhash under h.
void ReferenceSeal(const BlockCipher& encrypt, const uint8_t h[16], uint8_t counter[16],
                   uint8_t x[16], const uint8_t* in, uint8_t* out, size_t blocks);

}  // namespace sealbox::crypto::test

#endif  // SEALBOX_CRYPTO_TESTING_KERNEL_REFERENCE_H_
