// The contract between the AES-GCM mode layer (crypto/aes_gcm.cc) and each
// implementation. A kernel supplies only what is hot or hardware-specific: key
// expansion with GHASH key precomputation, single-block AES, and bulk whole-block
// CTR+GHASH. Everything else of GCM (J0, AAD, partial blocks, lengths block, tag,
// limits, tag comparison) lives once in the mode layer.
//
// Kernels are leaves: they include this header and nothing of each other.
#ifndef SEALBOX_CRYPTO_KERNEL_KERNEL_H_
#define SEALBOX_CRYPTO_KERNEL_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <new>

#include "crypto/secret/locked_memory.h"

namespace sealbox::crypto::kernel {

inline constexpr size_t kBlockBytes = 16;

// Opaque storage for one expanded key. Each kernel lays it out as it likes (AES
// round keys in its own form, powers of H, tables) and declares how many bytes of
// it that takes (Kernel::schedule_bytes). The mode layer never reads it and wipes it
// when the key is destroyed.
inline constexpr size_t kMaxKeyScheduleBytes = 4096;
// The type is the largest schedule, but an ExpandedKey allocates only its kernel's
// schedule_bytes of it, in secret memory (locked, left out of core dumps, zeroed on
// free), 64-byte aligned: a kernel touches no byte past its own schedule_bytes.
// Tests may still create a whole one, on the stack or (in secret memory) on the heap.
struct alignas(64) KeySchedule {
  uint8_t bytes[kMaxKeyScheduleBytes];

  static void* operator new(std::size_t size, std::align_val_t alignment) {
    return AllocateSecret(size, static_cast<std::size_t>(alignment));
  }
  static void operator delete(void* p, std::size_t size, std::align_val_t alignment) {
    FreeSecret(p, size, static_cast<std::size_t>(alignment));
  }
};

// Counter blocks are big-endian; only the low 32 bits count (GCM's inc32), wrapping
// modulo 2^32. Every function below may be called with `in == out` (exact alias)
// and with buffers of any alignment.
struct Kernel {
  // Stable name used by the operator override and in reports ("portable").
  const char* name;

  // True when no branch and no memory index depends on key, data or H.
  bool constant_time;

  // Expands `key` (16, 24 or 32 bytes, already validated) into `schedule`, including
  // H = AES_K(0^128) and whatever multiples or powers of H the kernel uses.
  void (*expand_key)(const uint8_t* key, size_t key_bytes, KeySchedule* schedule);

  // out = AES_K(in), for one block.
  void (*encrypt_block)(const KeySchedule& schedule, const uint8_t in[16], uint8_t out[16]);

  // For each of `blocks` 16-byte blocks of `in`: x = (x ^ block) * H in GF(2^128).
  void (*ghash)(const KeySchedule& schedule, uint8_t x[16], const uint8_t* in, size_t blocks);

  // out = in ^ AES_K(counter), counter += 1 per block; then x absorbs the output
  // (the ciphertext). `counter` is left at the next unused value.
  void (*seal_blocks)(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16],
                      const uint8_t* in, uint8_t* out, size_t blocks);

  // x absorbs `in` (the ciphertext); out = in ^ AES_K(counter), counter += 1 per block.
  void (*open_blocks)(const KeySchedule& schedule, uint8_t counter[16], uint8_t x[16],
                      const uint8_t* in, uint8_t* out, size_t blocks);

  // Bytes of KeySchedule this kernel uses: sizeof its own schedule struct, checked
  // against kMaxKeyScheduleBytes where it is laid out. A kernel that does not say
  // gets the whole KeySchedule.
  size_t schedule_bytes = kMaxKeyScheduleBytes;
};

}  // namespace sealbox::crypto::kernel

#endif  // SEALBOX_CRYPTO_KERNEL_KERNEL_H_
