#include "crypto/secret/locked_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>

namespace sealbox::crypto {
namespace {

// Size classes: powers of two from 16 to 256 bytes, then every multiple of 256 up to
// 4 KiB, so that a kernel's schedule (1,280 bytes for the x86-64 kernels, 2,896 for
// portable) wastes at most 255 bytes where powers of two would waste up to half.
constexpr size_t kMinSlot = 16;
constexpr size_t kStep = 256;  // the last power-of-two class, then the step
constexpr size_t kMaxSlot = 4096;
constexpr size_t kPowerClasses = 5;                                // 16, 32, 64, 128, 256
constexpr size_t kClasses = kPowerClasses + kMaxSlot / kStep - 1;  // + 512 .. 4096
// Arenas are mapped and locked whole; each size class carves runs of up to
// kRunBytes from them, so one class's slots sit together and another's alignment
// never leaves a hole between them.
constexpr size_t kArenaBytes = 64 * 1024;
constexpr size_t kRunBytes = 16 * 1024;

struct FreeSlot {
  FreeSlot* next;
};

struct SizeClass {
  FreeSlot* free = nullptr;  // slots given back, zeroed but for `next`
  uint8_t* run = nullptr;    // the next never-used slot of the current run
  uint8_t* run_end = nullptr;
};

struct Pool {
  std::mutex mutex;
  std::array<SizeClass, kClasses> classes{};
  uint8_t* arena = nullptr;  // the arena runs are carved from
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

size_t RoundUp(size_t bytes, size_t multiple) {
  return (bytes + multiple - 1) / multiple * multiple;
}

// The bytes a request occupies: at least its alignment, and where the alignment
// is more than a 256-byte multiple guarantees, a power of two (a power-of-two slot
// is aligned to its size, see SlotAlignment).
size_t RequestBytes(size_t size, size_t alignment) {
  size_t bytes = std::max<size_t>({size, alignment, 1});
  if (alignment > kStep && bytes <= kMaxSlot) {
    size_t power = kMinSlot;
    while (power < bytes) power <<= 1;
    bytes = power;
  }
  return bytes;
}

// The class of a request of `bytes` <= kMaxSlot, and its slot size.
size_t ClassOf(size_t bytes) {
  if (bytes > kStep) return kPowerClasses + (bytes - 1) / kStep - 1;
  size_t slot = kMinSlot, index = 0;
  while (slot < bytes) {
    slot <<= 1;
    ++index;
  }
  return index;
}
size_t SlotBytes(size_t index) {
  return index < kPowerClasses ? kMinSlot << index : (index - kPowerClasses + 2) * kStep;
}

// Slots of a class start at multiples of their size from a run that starts at a
// multiple of this: the largest power of two dividing the slot size (256 or more
// past the power-of-two classes), hence aligned to any alignment RequestBytes let in.
size_t SlotAlignment(size_t slot_bytes) { return slot_bytes & (~slot_bytes + 1); }

// Fresh pages, locked if the OS lets us, never in a core dump. Caller holds the lock.
uint8_t* MapSecretPages(Pool& pool, size_t bytes, bool* locked = nullptr) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_DONTDUMP
  madvise(p, bytes, MADV_DONTDUMP);
#endif
  const bool ok = mlock(p, bytes) == 0;
  (ok ? pool.locked : pool.unlocked) += bytes;
  if (locked != nullptr) *locked = ok;
  return static_cast<uint8_t*>(p);
}

// Starts a new run for a class of `slot_bytes`: up to kRunBytes of whole slots from
// the arena, a new arena when not even one slot fits. Caller holds the lock.
void NewRun(Pool& pool, SizeClass& size_class, size_t slot_bytes) {
  size_t start = RoundUp(pool.arena_used, SlotAlignment(slot_bytes));
  if (start + slot_bytes > kArenaBytes) {
    pool.arena = MapSecretPages(pool, kArenaBytes);
    start = 0;
  }
  const size_t room = std::min(kRunBytes, kArenaBytes - start);
  const size_t run_bytes = room / slot_bytes * slot_bytes;
  size_class.run = pool.arena + start;
  size_class.run_end = size_class.run + run_bytes;
  pool.arena_used = start + run_bytes;
}

}  // namespace

void* AllocateSecret(size_t size, size_t alignment) {
  const size_t bytes = RequestBytes(size, alignment);
  Pool& pool = ThePool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  if (bytes > kMaxSlot) {
    bool locked = false;
    uint8_t* pages = MapSecretPages(pool, RoundUp(bytes, PageSize()), &locked);
    pool.large_locked[pages] = locked;
    return pages;
  }
  const size_t index = ClassOf(bytes);
  SizeClass& size_class = pool.classes[index];
  if (FreeSlot* slot = size_class.free) {
    size_class.free = slot->next;
    slot->next = nullptr;
    return slot;
  }
  const size_t slot_bytes = SlotBytes(index);
  if (size_class.run == size_class.run_end) NewRun(pool, size_class, slot_bytes);
  void* out = size_class.run;
  size_class.run += slot_bytes;
  return out;
}

void FreeSecret(void* data, size_t size, size_t alignment) {
  if (data == nullptr) return;
  const size_t bytes = RequestBytes(size, alignment);
  Pool& pool = ThePool();
  if (bytes > kMaxSlot) {
    const size_t mapped = RoundUp(bytes, PageSize());
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
  explicit_bzero(data, SlotBytes(index));
  std::lock_guard<std::mutex> lock(pool.mutex);
  FreeSlot* slot = static_cast<FreeSlot*>(data);
  slot->next = pool.classes[index].free;
  pool.classes[index].free = slot;
}

size_t SecretSlotBytes(size_t size, size_t alignment) {
  const size_t bytes = RequestBytes(size, alignment);
  return bytes > kMaxSlot ? RoundUp(bytes, PageSize()) : SlotBytes(ClassOf(bytes));
}

SecretMemoryStats LockedMemoryStats() {
  Pool& pool = ThePool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  return {pool.locked, pool.unlocked};
}

}  // namespace sealbox::crypto
