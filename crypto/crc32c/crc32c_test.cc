// CRC32C: the known vectors of RFC 3720 (B.4) and the usual check value on every
// implementation this CPU runs, each against the portable one on every length and
// alignment, and extension piece by piece.
#include "crypto/crc32c/crc32c.h"

#include <cstdio>
#include <cstdlib>
#include <random>

#include "absl/strings/str_join.h"

#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

std::vector<uint8_t> Filled(size_t size, uint8_t value) {
  return std::vector<uint8_t>(size, value);
}

struct Vector {
  const char* what;
  std::vector<uint8_t> data;
  uint32_t crc;
};

std::vector<Vector> KnownVectors() {
  std::vector<uint8_t> increasing(32), decreasing(32);
  for (int i = 0; i < 32; ++i) {
    increasing[i] = static_cast<uint8_t>(i);
    decreasing[i] = static_cast<uint8_t>(31 - i);
  }
  const std::string check = "123456789";
  return {
      {"RFC 3720 B.4: 32 bytes of zeros", Filled(32, 0x00), 0x8a9136aa},
      {"RFC 3720 B.4: 32 bytes of ones", Filled(32, 0xff), 0x62a8ab43},
      {"RFC 3720 B.4: 32 incrementing bytes", increasing, 0x46dd794e},
      {"RFC 3720 B.4: 32 decrementing bytes", decreasing, 0x113fdb5c},
      {"RFC 3720 B.4: an iSCSI SCSI Read (10) command PDU",
       {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
        0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
       0xd9963a56},
      {"the check value: \"123456789\"", std::vector<uint8_t>(check.begin(), check.end()),
       0xe3069283},
      {"no bytes", {}, 0x00000000},
  };
}

TEST(Crc32cTest, KnownVectorsOnEveryImplementation) {
  const std::vector<std::string> implementations = SupportedCrc32cImplementations();
  ASSERT_FALSE(implementations.empty());
  EXPECT_EQ(implementations.front(), "portable");
  std::printf("implementations here: %s; in use: %s\n",
              absl::StrJoin(implementations, ", ").c_str(), Crc32cImplementation());
  for (const std::string& impl : implementations) {
    for (const Vector& v : KnownVectors()) {
      EXPECT_EQ(ExtendCrc32cWith(impl, 0, v.data), v.crc) << impl << ": " << v.what;
    }
  }
  for (const Vector& v : KnownVectors()) EXPECT_EQ(Crc32c(v.data), v.crc) << v.what;
  EXPECT_EQ(Crc32c(absl::string_view("123456789")), 0xe3069283u);
}

TEST(Crc32cTest, TheFastestSupportedImplementationIsUsed) {
  // SupportedCrc32cImplementations() lists portable first, the preferred one last
  // (unless SEALBOX_HIDE_CPU_FEATURES hides its feature from the dispatch).
  if (std::getenv("SEALBOX_HIDE_CPU_FEATURES") == nullptr) {
    EXPECT_EQ(Crc32cImplementation(), SupportedCrc32cImplementations().back());
  }
}

TEST(Crc32cTest, EveryImplementationAgreesAtEveryLengthAndAlignment) {
  std::mt19937 rng(20261205);
  std::vector<uint8_t> buffer(4096 + 8);
  for (uint8_t& b : buffer) b = static_cast<uint8_t>(rng());
  for (const std::string& impl : SupportedCrc32cImplementations()) {
    for (size_t offset = 0; offset < 8; ++offset) {
      for (size_t size = 0; size <= 300; ++size) {
        const auto data = absl::MakeConstSpan(buffer).subspan(offset, size);
        ASSERT_EQ(ExtendCrc32cWith(impl, 0, data), ExtendCrc32cWith("portable", 0, data))
            << impl << " offset " << offset << " size " << size;
      }
    }
  }
  // Around the sizes where the hardware kernels switch between interleaved streams
  // and one: three streams over 8 KiB or 256-byte blocks (x86_sse42, armv8_crc32),
  // six over 4 KiB, 512-byte or 64-byte blocks (x86_sse42_pclmul).
  std::vector<uint8_t> large(3 * 8192 * 2 + 3 * 256 * 2 + 64);
  for (uint8_t& b : large) b = static_cast<uint8_t>(rng());
  for (const std::string& impl : SupportedCrc32cImplementations()) {
    for (size_t size : std::vector<size_t>{383,
                                           384,
                                           385,
                                           391,
                                           392,
                                           767,
                                           768,
                                           769,
                                           775,
                                           776,
                                           1536,
                                           3071,
                                           3072,
                                           3073,
                                           3072 + 384 + 8 + 1,
                                           24575,
                                           24576,
                                           24577,
                                           24576 + 768,
                                           24576 + 3072 + 384 + 7,
                                           49152,
                                           49152 + 8 + 3,
                                           large.size() - 1}) {
      for (size_t offset : {size_t{0}, size_t{5}}) {
        const auto data = absl::MakeConstSpan(large).subspan(offset, size);
        ASSERT_EQ(ExtendCrc32cWith(impl, 0x12345678, data),
                  ExtendCrc32cWith("portable", 0x12345678, data))
            << impl << " offset " << offset << " size " << size;
      }
    }
  }
}

TEST(Crc32cTest, ExtendingPieceByPieceEqualsTheWhole) {
  std::mt19937 rng(7);
  std::vector<uint8_t> data(10000);
  for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
  const uint32_t whole = Crc32c(data);
  for (const std::string& impl : SupportedCrc32cImplementations()) {
    uint32_t crc = 0;
    size_t at = 0;
    while (at < data.size()) {
      const size_t n = std::min<size_t>(rng() % 97, data.size() - at);
      crc = ExtendCrc32cWith(impl, crc, absl::MakeConstSpan(data).subspan(at, n));
      at += n;
    }
    EXPECT_EQ(crc, whole) << impl;
  }
}

TEST(Crc32cTest, OneChangedBitChangesTheCrc) {
  std::vector<uint8_t> data = Filled(64, 0x5a);
  const uint32_t before = Crc32c(data);
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(Crc32c(data), before) << "bit " << bit;
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

}  // namespace
}  // namespace sealbox::crypto
