#include "crypto/secret/locked_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <map>
#include <mutex>

namespace sealbox::crypto {
namespace {

constexpr size_t kMinSlot = 16;
constexpr size_t kMaxSlot = 4096;
constexpr size_t kClasses = 9;  // 16, 32, ..., 4096
constexpr size_t kArenaBytes = 64 * 1024;

struct FreeSlot {
  FreeSlot* next;
};

struct Pool {
  std::mutex mutex;
  std::array<FreeSlot*, kClasses> free{};  // per size class
  uint8_t* arena = nullptr;                 // the arena being carved
  size_t arena_used = kArenaBytes;
  uint64_t locked = 0;
  uint64_t unlocked = 0;
  std::map<void*, bool> large_locked;  // pages of their own -> whether locked
};

Pool& ThePool() {
  static Pool* pool = new Pool;  // never destroyed: secrets may die after main
  return *pool;
}

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t ClassOf(size_t bytes) {
  size_t slot = kMinSlot, index = 0;
  while (slot < bytes) {
    slot <<= 1;
    ++index;
  }
  return index;
}

// Fresh pages, locked if the OS lets us, never in a core dump. Caller holds the lock.
uint8_t* MapSecretPages(Pool& pool, size_t bytes, bool* locked = nullptr) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_DONTDUMP
  madvise(p, bytes, MADV_DONTDUMP);
#endif
  const bool ok = mlock(p, bytes) == 0;
  (ok ? pool.locked : pool.unlocked) += bytes;
  if (locked != nullptr) *locked = ok;
  return static_cast<uint8_t*>(p);
}

size_t RoundToPages(size_t bytes) {
  const size_t page = PageSize();
  return (bytes + page - 1) / page * page;
}

}  // namespace

void* AllocateSecret(size_t size, size_t alignment) {
  const size_t bytes = size < alignment ? alignment : (size == 0 ? 1 : size);
  Pool& pool = ThePool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  if (bytes > kMaxSlot) {
    bool locked = false;
    uint8_t* pages = MapSecretPages(pool, RoundToPages(bytes), &locked);
    pool.large_locked[pages] = locked;
    return pages;
  }
  const size_t index = ClassOf(bytes);
  if (FreeSlot* slot = pool.free[index]) {
    pool.free[index] = slot->next;
    slot->next = nullptr;
    return slot;
  }
  // Slots are their size's multiple from a page-aligned arena, hence aligned to it.
  const size_t slot_bytes = kMinSlot << index;
  pool.arena_used = (pool.arena_used + slot_bytes - 1) / slot_bytes * slot_bytes;
  if (pool.arena_used + slot_bytes > kArenaBytes) {
    pool.arena = MapSecretPages(pool, kArenaBytes);
    pool.arena_used = 0;
  }
  void* out = pool.arena + pool.arena_used;
  pool.arena_used += slot_bytes;
  return out;
}

void FreeSecret(void* data, size_t size, size_t alignment) {
  if (data == nullptr) return;
  const size_t bytes = size < alignment ? alignment : (size == 0 ? 1 : size);
  Pool& pool = ThePool();
  if (bytes > kMaxSlot) {
    const size_t mapped = RoundToPages(bytes);
    explicit_bzero(data, mapped);
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = pool.large_locked.find(data);
    if (it != pool.large_locked.end()) {
      (it->second ? pool.locked : pool.unlocked) -= mapped;
      pool.large_locked.erase(it);
    }
    munmap(data, mapped);  // unlocks too
    return;
  }
  const size_t index = ClassOf(bytes);
  explicit_bzero(data, kMinSlot << index);
  std::lock_guard<std::mutex> lock(pool.mutex);
  FreeSlot* slot = static_cast<FreeSlot*>(data);
  slot->next = pool.free[index];
  pool.free[index] = slot;
}

SecretMemoryStats LockedMemoryStats() {
  Pool& pool = ThePool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  return {pool.locked, pool.unlocked};
}

}  // namespace sealbox::crypto
