#include <nmmintrin.h>
#include <wmmintrin.h>

#include <array>
#include <cstring>

#include "crypto/crc32c/crc32c_kernels.h"
#include "crypto/crc32c/crc32c_shift.h"

namespace sealbox::crypto::crc32c_internal {
namespace {

// `crc32` has a latency of 3 cycles and issues once per cycle on Intel cores,
// twice on AMD Zen 5, so six independent streams run at about twice the rate of three
// (docs/PERFORMANCE.md, "Checksums at twice the rate"). So a buffer is taken six
// blocks at a time, one stream each, and
// the streams are joined with one carry-less multiply each (crc32c_shift.h,
// ShiftMultiplier), independent of one another, not a chain of table lookups.
constexpr int kStreams = 6;

// Multipliers moving a stream's state to the end of its group: stream s of
// blocks of `block` bytes moves (kStreams - 1 - s) blocks on.
struct GroupShifts {
  explicit GroupShifts(size_t block) {
    for (int s = 0; s + 1 < kStreams; ++s) {
      by[s] = ShiftMultiplier((kStreams - 1 - s) * block);
    }
  }
  std::array<uint64_t, kStreams - 1> by;
};

// Block sizes, largest first: groups of 24 KiB, 3 KiB and 384 bytes.
constexpr size_t kBlocks[] = {4096, 512, 64};

const std::array<GroupShifts, 3>& Shifts() {
  static const auto* shifts = new std::array<GroupShifts, 3>{
      GroupShifts(kBlocks[0]), GroupShifts(kBlocks[1]), GroupShifts(kBlocks[2])};
  return *shifts;
}

__attribute__((target("sse4.2,pclmul"))) inline __m128i Multiply(uint64_t state, uint64_t by) {
  return _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<int64_t>(state)),
                              _mm_cvtsi64_si128(static_cast<int64_t>(by)), 0x00);
}

// One group: six streams over six consecutive blocks, joined.
template <size_t kBlock>
__attribute__((target("sse4.2,pclmul"))) inline uint32_t SixBlocks(uint32_t crc,
                                                                   const uint8_t* data,
                                                                   const GroupShifts& shifts) {
  uint64_t c0 = crc, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0;
  for (size_t i = 0; i < kBlock; i += 8) {
    uint64_t w[kStreams];
    for (int s = 0; s < kStreams; ++s) std::memcpy(&w[s], data + s * kBlock + i, 8);
    c0 = _mm_crc32_u64(c0, w[0]);
    c1 = _mm_crc32_u64(c1, w[1]);
    c2 = _mm_crc32_u64(c2, w[2]);
    c3 = _mm_crc32_u64(c3, w[3]);
    c4 = _mm_crc32_u64(c4, w[4]);
    c5 = _mm_crc32_u64(c5, w[5]);
  }
  // The products' sum, reduced once: `crc32` from zero is linear in its input.
  __m128i sum = _mm_xor_si128(Multiply(c0, shifts.by[0]), Multiply(c1, shifts.by[1]));
  sum = _mm_xor_si128(sum, Multiply(c2, shifts.by[2]));
  sum = _mm_xor_si128(sum, Multiply(c3, shifts.by[3]));
  sum = _mm_xor_si128(sum, Multiply(c4, shifts.by[4]));
  return static_cast<uint32_t>(_mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(sum)))) ^
         static_cast<uint32_t>(c5);
}

// Every whole group of six blocks of kBlock bytes at the front of the buffer.
template <size_t kBlock>
__attribute__((target("sse4.2,pclmul"))) inline void Groups(uint32_t& crc, const uint8_t*& data,
                                                            size_t& size,
                                                            const GroupShifts& shifts) {
  for (; size >= kStreams * kBlock; data += kStreams * kBlock, size -= kStreams * kBlock) {
    crc = SixBlocks<kBlock>(crc, data, shifts);
  }
}

}  // namespace

__attribute__((target("sse4.2,pclmul"))) uint32_t ExtendX86Pclmul(uint32_t crc, const uint8_t* data,
                                                                  size_t size) {
  const std::array<GroupShifts, 3>& shifts = Shifts();
  uint32_t c = ~crc;
  Groups<kBlocks[0]>(c, data, size, shifts[0]);
  Groups<kBlocks[1]>(c, data, size, shifts[1]);
  Groups<kBlocks[2]>(c, data, size, shifts[2]);
  // Under 384 bytes are left: one stream, as the SSE4.2 kernel runs them.
  return ExtendX86Sse42(~c, data, size);
}

}  // namespace sealbox::crypto::crc32c_internal
