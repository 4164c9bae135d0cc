// Memory for secrets: kept out of swap (mlock) and out of core dumps (MADV_DONTDUMP)
// where the OS allows, and zeroed before it is reused or returned.
//
// Small blocks come from 64 KiB arenas, where each size class (powers of two to
// 256 B, then multiples of 256 B to 4 KiB) carves runs of slots of its own size;
// larger blocks get pages of their own. Arenas are kept for reuse, never unmapped, so
// the locked total is the peak of secrets held at once (rounded up to arenas).
// When mlock fails (RLIMIT_MEMLOCK too low) the memory is still handed out, still
// excluded from core dumps, and LockedMemoryStats() says how much is unlocked.
#ifndef SEALBOX_CRYPTO_SECRET_LOCKED_MEMORY_H_
#define SEALBOX_CRYPTO_SECRET_LOCKED_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <new>

namespace sealbox::crypto {

// `alignment` is a power of two, at most the page size. Throws std::bad_alloc when
// the OS has no memory, like operator new.
void* AllocateSecret(size_t size, size_t alignment = alignof(std::max_align_t));
// Zeroes and releases what AllocateSecret returned, given the same size and alignment.
void FreeSecret(void* data, size_t size, size_t alignment = alignof(std::max_align_t));

// The bytes AllocateSecret sets aside for a block of `size` and `alignment`: its
// size class, or whole pages past 4 KiB.
size_t SecretSlotBytes(size_t size, size_t alignment = alignof(std::max_align_t));

struct SecretMemoryStats {
  uint64_t locked_bytes = 0;    // mapped for secrets and locked in RAM
  uint64_t unlocked_bytes = 0;  // mapped for secrets, but mlock failed
};
SecretMemoryStats LockedMemoryStats();

// A standard allocator over AllocateSecret, for containers of secret bytes.
template <typename T>
struct SecretAllocator {
  using value_type = T;
  SecretAllocator() = default;
  template <typename U>
  SecretAllocator(const SecretAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(AllocateSecret(n * sizeof(T), alignof(T))); }
  void deallocate(T* p, size_t n) { FreeSecret(p, n * sizeof(T), alignof(T)); }
  template <typename U>
  bool operator==(const SecretAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const SecretAllocator<U>&) const {
    return false;
  }
};

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_SECRET_LOCKED_MEMORY_H_
