#include "crypto/secret/locked_memory.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

TEST(LockedMemory, SlotsAreAlignedReusedAndZeroed) {
  for (size_t size : {1, 16, 17, 32, 100, 4096}) {
    for (size_t alignment : {1, 8, 16, 64}) {
      auto* p = static_cast<uint8_t*>(AllocateSecret(size, alignment));
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u) << size;
      std::memset(p, 0xa5, size);
      FreeSecret(p, size, alignment);
      // The same class hands the freed slot out again, zeroed.
      auto* q = static_cast<uint8_t*>(AllocateSecret(size, alignment));
      EXPECT_EQ(q, p);
      for (size_t i = 0; i < size; ++i) ASSERT_EQ(q[i], 0) << size << " " << i;
      FreeSecret(q, size, alignment);
    }
  }
}

TEST(LockedMemory, LargeBlocksAndAccounting) {
  const SecretMemoryStats before = LockedMemoryStats();
  void* p = AllocateSecret(100000);
  std::memset(p, 1, 100000);
  const SecretMemoryStats during = LockedMemoryStats();
  EXPECT_GE(during.locked_bytes + during.unlocked_bytes,
            before.locked_bytes + before.unlocked_bytes + 100000);
  FreeSecret(p, 100000);
  const SecretMemoryStats after = LockedMemoryStats();
  EXPECT_EQ(after.locked_bytes, before.locked_bytes);
  EXPECT_EQ(after.unlocked_bytes, before.unlocked_bytes);
}

TEST(LockedMemory, AllocatorServesAVector) {
  std::vector<uint8_t, SecretAllocator<uint8_t>> v(40, 7);
  v.resize(5000, 9);
  EXPECT_EQ(v[0], 7);
  EXPECT_EQ(v[4999], 9);
  const SecretMemoryStats stats = LockedMemoryStats();
  EXPECT_GT(stats.locked_bytes + stats.unlocked_bytes, 0u);
}

}  // namespace
}  // namespace sealbox::crypto
