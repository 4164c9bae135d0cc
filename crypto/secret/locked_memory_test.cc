#include "crypto/secret/locked_memory.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

TEST(LockedMemory, SlotsAreAlignedReusedAndZeroed) {
  for (size_t size : {1, 16, 17, 32, 100, 257, 300, 672, 1280, 2896, 4000, 4096}) {
    for (size_t alignment : {1, 8, 16, 64, 256, 512, 4096}) {
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

TEST(LockedMemory, SizeClassesFitSchedules) {
  // Powers of two to 256 bytes, then multiples of 256: a 1,280-byte x86-64 schedule
  // takes 1,280 bytes, not 2,048.
  EXPECT_EQ(SecretSlotBytes(1, 1), 16u);
  EXPECT_EQ(SecretSlotBytes(17, 1), 32u);
  EXPECT_EQ(SecretSlotBytes(200, 16), 256u);
  EXPECT_EQ(SecretSlotBytes(257, 16), 512u);
  EXPECT_EQ(SecretSlotBytes(672, 64), 768u);
  EXPECT_EQ(SecretSlotBytes(1280, 64), 1280u);
  EXPECT_EQ(SecretSlotBytes(2896, 64), 3072u);
  EXPECT_EQ(SecretSlotBytes(4096, 64), 4096u);
  // More alignment than a multiple of 256 gives: a power of two.
  EXPECT_EQ(SecretSlotBytes(600, 512), 1024u);
  for (size_t size = 1; size <= 4096; ++size) {
    ASSERT_GE(SecretSlotBytes(size, 1), size);
    ASSERT_LT(SecretSlotBytes(size, 1), size <= 256 ? std::max<size_t>(2 * size, 17) : size + 256)
        << size;
  }
}

TEST(LockedMemory, SmallBlocksArePackedNotGivenPages) {
  // 1,000 schedules of 1,280 bytes, interleaved with small secrets of another
  // class, take their size (plus part of an arena), not a page or a power of two each.
  constexpr size_t kBlocks = 1000, kBytes = 1280;
  const SecretMemoryStats before = LockedMemoryStats();
  std::vector<uint8_t*> blocks, small;
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(static_cast<uint8_t*>(AllocateSecret(kBytes, 64)));
    small.push_back(static_cast<uint8_t*>(AllocateSecret(32, 16)));
    ASSERT_EQ(reinterpret_cast<uintptr_t>(blocks.back()) % 64, 0u);
    std::memset(blocks.back(), 0x5a, kBytes);
    std::memset(small.back(), 0xa5, 32);
  }
  const SecretMemoryStats during = LockedMemoryStats();
  const uint64_t mapped =
      (during.locked_bytes + during.unlocked_bytes) - (before.locked_bytes + before.unlocked_bytes);
  EXPECT_LE(mapped, kBlocks * (kBytes + 32) * 107 / 100 + 2 * 64 * 1024);
  // No two blocks overlap, and writing one disturbed no other.
  std::vector<uint8_t*> sorted = blocks;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    ASSERT_GE(static_cast<size_t>(sorted[i] - sorted[i - 1]), kBytes);
  }
  for (size_t i = 0; i < kBlocks; ++i) {
    ASSERT_EQ(blocks[i][0], 0x5a);
    ASSERT_EQ(blocks[i][kBytes - 1], 0x5a);
    ASSERT_EQ(small[i][31], 0xa5);
    FreeSecret(blocks[i], kBytes, 64);
    FreeSecret(small[i], 32, 16);
  }
  // Freed slots are reused before any new memory is mapped.
  for (size_t i = 0; i < kBlocks; ++i)
    blocks[i] = static_cast<uint8_t*>(AllocateSecret(kBytes, 64));
  const SecretMemoryStats again = LockedMemoryStats();
  EXPECT_EQ(again.locked_bytes + again.unlocked_bytes, during.locked_bytes + during.unlocked_bytes);
  for (size_t i = 0; i < kBlocks; ++i) {
    for (size_t j = 0; j < kBytes; ++j) ASSERT_EQ(blocks[i][j], 0) << i << " " << j;
    FreeSecret(blocks[i], kBytes, 64);
  }
}

// The VmFlags line of /proc/self/smaps for the mapping that holds `p`.
std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  while (std::getline(smaps, line)) {
    unsigned long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &start, &end) == 2) {
      inside = start <= address && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(LockedMemory, BlocksStayOutOfCoreDumpsAndLockedWhenTheLimitAllows) {
  void* slot = AllocateSecret(1280, 64);
  void* large = AllocateSecret(100000);
  const SecretMemoryStats stats = LockedMemoryStats();
  for (void* p : {slot, large}) {
    const std::string flags = VmFlagsOf(p);
    ASSERT_FALSE(flags.empty()) << "no /proc/self/smaps entry";
    // QEMU user mode (the cpus and arm test stages, which set QEMU_CPU) accepts
    // MADV_DONTDUMP without passing it on to the host mapping smaps describes.
    if (std::getenv("QEMU_CPU") == nullptr) {
      EXPECT_NE(flags.find(" dd"), std::string::npos) << flags;  // MADV_DONTDUMP
    }
    // Locked when mlock succeeded every time. ASan's mlock does nothing and says it
    // did, so there only MADV_DONTDUMP is seen.
#ifndef __SANITIZE_ADDRESS__
    if (stats.unlocked_bytes == 0) {
      EXPECT_NE(flags.find(" lo"), std::string::npos) << flags;
    }
#endif
  }
  FreeSecret(slot, 1280, 64);
  FreeSecret(large, 100000);
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
