#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "crypto/table/table.h"
#include "gtest/gtest.h"

namespace sealbox::crypto::kernel {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes FromHex(const std::string& hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string ToHex(const uint8_t* data, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 0xf];
  }
  return out;
}

std::string ToHex(const Bytes& data) { return ToHex(data.data(), data.size()); }

std::unique_ptr<KeySchedule> Expand(const Bytes& key) {
  auto schedule = std::make_unique<KeySchedule>();
  kTableKernel.expand_key(key.data(), key.size(), schedule.get());
  return schedule;
}

Bytes EncryptOne(const Bytes& key, const Bytes& block) {
  auto schedule = Expand(key);
  Bytes out(kBlockBytes);
  kTableKernel.encrypt_block(*schedule, block.data(), out.data());
  return out;
}

TEST(TableKernelTest, Describes) {
  EXPECT_STREQ(kTableKernel.name, "table");
  EXPECT_FALSE(kTableKernel.constant_time);
}

// FIPS-197 Appendix C.
TEST(TableKernelTest, AesFips197) {
  const Bytes plaintext = FromHex("00112233445566778899aabbccddeeff");
  EXPECT_EQ(ToHex(EncryptOne(FromHex("000102030405060708090a0b0c0d0e0f"), plaintext)),
            "69c4e0d86a7b0430d8cdb78070b4c55a");
  EXPECT_EQ(ToHex(EncryptOne(
                FromHex("000102030405060708090a0b0c0d0e0f1011121314151617"),
                plaintext)),
            "dda97ca4864cdfe06eaf70a0ec0d7191");
  EXPECT_EQ(ToHex(EncryptOne(FromHex("000102030405060708090a0b0c0d0e0f"
                                     "101112131415161718191a1b1c1d1e1f"),
                             plaintext)),
            "8ea2b7ca516745bfeafc49904b496089");
}

TEST(TableKernelTest, EncryptBlockInPlace) {
  auto schedule = Expand(FromHex("000102030405060708090a0b0c0d0e0f"));
  Bytes block = FromHex("00112233445566778899aabbccddeeff");
  kTableKernel.encrypt_block(*schedule, block.data(), block.data());
  EXPECT_EQ(ToHex(block), "69c4e0d86a7b0430d8cdb78070b4c55a");
}

// GHASH over one block X from 0 is X * H; with X = 1 (top bit first) it is H.
TEST(TableKernelTest, GhashOfOneIsH) {
  auto schedule = Expand(Bytes(16, 0));
  uint8_t x[16] = {};
  Bytes one(16, 0);
  one[0] = 0x80;
  kTableKernel.ghash(*schedule, x, one.data(), 1);
  EXPECT_EQ(ToHex(x, 16), "66e94bd4ef8a2c3b884cfa59ca342b2e");
}

struct GcmResult {
  Bytes ciphertext;
  Bytes tag;
};

// GCM with a 96-bit IV, put together from the kernel's parts as the mode layer does.
GcmResult Gcm(const Bytes& key, const Bytes& iv, const Bytes& aad,
              const Bytes& plaintext) {
  auto schedule = Expand(key);
  const KeySchedule& s = *schedule;
  uint8_t x[16] = {};
  auto absorb_padded = [&](const uint8_t* data, size_t size) {
    kTableKernel.ghash(s, x, data, size / 16);
    if (size % 16 != 0) {
      uint8_t block[16] = {};
      std::memcpy(block, data + size / 16 * 16, size % 16);
      kTableKernel.ghash(s, x, block, 1);
    }
  };
  uint8_t j0[16] = {};
  std::memcpy(j0, iv.data(), 12);
  j0[15] = 1;
  uint8_t counter[16];
  std::memcpy(counter, j0, 16);
  counter[15] = 2;

  absorb_padded(aad.data(), aad.size());
  Bytes ciphertext(plaintext.size());
  const size_t whole = plaintext.size() / 16;
  kTableKernel.seal_blocks(s, counter, x, plaintext.data(), ciphertext.data(),
                           whole);
  if (plaintext.size() % 16 != 0) {
    uint8_t keystream[16];
    kTableKernel.encrypt_block(s, counter, keystream);
    for (size_t i = whole * 16; i < plaintext.size(); ++i) {
      ciphertext[i] = plaintext[i] ^ keystream[i - whole * 16];
    }
    absorb_padded(ciphertext.data() + whole * 16, plaintext.size() % 16);
  }
  uint8_t lengths[16] = {};
  const uint64_t aad_bits = aad.size() * 8;
  const uint64_t text_bits = plaintext.size() * 8;
  for (int i = 0; i < 8; ++i) {
    lengths[7 - i] = static_cast<uint8_t>(aad_bits >> (8 * i));
    lengths[15 - i] = static_cast<uint8_t>(text_bits >> (8 * i));
  }
  kTableKernel.ghash(s, x, lengths, 1);
  uint8_t mask[16];
  kTableKernel.encrypt_block(s, j0, mask);
  Bytes tag(16);
  for (int i = 0; i < 16; ++i) tag[i] = x[i] ^ mask[i];
  return {ciphertext, tag};
}

const char kP3[] =
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
    "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
const char kC3[] =
    "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
    "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985";
const char kK3[] = "feffe9928665731c6d6a8f9467308308";
const char kIv3[] = "cafebabefacedbaddecaf888";
const char kA4[] = "feedfacedeadbeeffeedfacedeadbeefabaddad2";

// McGrew & Viega, "The Galois/Counter Mode of Operation", test cases 1-4 and 16.
TEST(TableKernelTest, GcmMcGrewViega) {
  GcmResult r = Gcm(Bytes(16, 0), Bytes(12, 0), {}, {});
  EXPECT_EQ(ToHex(r.ciphertext), "");
  EXPECT_EQ(ToHex(r.tag), "58e2fccefa7e3061367f1d57a4e7455a");

  r = Gcm(Bytes(16, 0), Bytes(12, 0), {}, Bytes(16, 0));
  EXPECT_EQ(ToHex(r.ciphertext), "0388dace60b6a392f328c2b971b2fe78");
  EXPECT_EQ(ToHex(r.tag), "ab6e47d42cec13bdf53a67b21257bddf");

  r = Gcm(FromHex(kK3), FromHex(kIv3), {}, FromHex(kP3));
  EXPECT_EQ(ToHex(r.ciphertext), kC3);
  EXPECT_EQ(ToHex(r.tag), "4d5c2af327cd64a62cf35abd2ba6fab4");

  // Case 4: 60 bytes of case 3's plaintext, with AAD.
  r = Gcm(FromHex(kK3), FromHex(kIv3), FromHex(kA4),
          FromHex(std::string(kP3, 120)));
  EXPECT_EQ(ToHex(r.ciphertext), std::string(kC3, 120));
  EXPECT_EQ(ToHex(r.tag), "5bc94fbc3221a5db94fae95ae7121a47");

  // Case 16: case 4 with a 256-bit key.
  r = Gcm(FromHex(std::string(kK3) + kK3), FromHex(kIv3), FromHex(kA4),
          FromHex(std::string(kP3, 120)));
  EXPECT_EQ(ToHex(r.ciphertext),
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
            "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662");
  EXPECT_EQ(ToHex(r.tag), "76fc6ece0f4e1768cddf8853bb2d551b");
}

// seal_blocks' contract, one block at a time from encrypt_block and ghash.
void ReferenceSeal(const KeySchedule& s, uint8_t counter[16], uint8_t x[16],
                   const uint8_t* in, uint8_t* out, size_t blocks) {
  for (size_t b = 0; b < blocks; ++b) {
    uint8_t keystream[16];
    kTableKernel.encrypt_block(s, counter, keystream);
    for (int i = 0; i < 16; ++i) out[16 * b + i] = in[16 * b + i] ^ keystream[i];
    kTableKernel.ghash(s, x, out + 16 * b, 1);
    for (int i = 15; i >= 12; --i) {
      if (++counter[i] != 0) break;
    }
  }
}

enum class Buffers { kSeparate, kInPlace, kMisaligned };

// seal_blocks and open_blocks against ReferenceSeal for 0..40 blocks, counters
// about to wrap, and each buffer layout.
class BlocksTest : public ::testing::TestWithParam<Buffers> {};

TEST_P(BlocksTest, MatchesReference) {
  const Buffers layout = GetParam();
  std::mt19937 rng(1234);
  auto random_bytes = [&](size_t n) {
    Bytes b(n);
    for (auto& v : b) v = static_cast<uint8_t>(rng());
    return b;
  };
  const uint32_t starts[] = {0, 1, 0x7fffffff, 0xffffffe0, 0xfffffffe, 0xffffffff};
  for (size_t key_bytes : {16, 24, 32}) {
    auto schedule = Expand(random_bytes(key_bytes));
    const KeySchedule& s = *schedule;
    for (uint32_t start : starts) {
      for (size_t blocks = 0; blocks <= 40; ++blocks) {
        SCOPED_TRACE(testing::Message() << "key " << key_bytes << " start " << start
                                        << " blocks " << blocks);
        const size_t size = blocks * 16;
        const Bytes plaintext = random_bytes(size);
        Bytes counter0 = random_bytes(16);
        for (int i = 0; i < 4; ++i) counter0[12 + i] = static_cast<uint8_t>(start >> (24 - 8 * i));
        const Bytes x0 = random_bytes(16);

        Bytes want_counter = counter0, want_x = x0, want(size);
        ReferenceSeal(s, want_counter.data(), want_x.data(), plaintext.data(),
                      want.data(), blocks);

        // Backing store with room to misalign either buffer.
        Bytes in_store(size + 8), out_store(size + 8);
        uint8_t* in = in_store.data();
        uint8_t* out = out_store.data();
        if (layout == Buffers::kMisaligned) {
          in += 1;
          out += 3;
        } else if (layout == Buffers::kInPlace) {
          out = in;
        }

        // Seal.
        std::copy(plaintext.begin(), plaintext.end(), in);
        Bytes counter = counter0, x = x0;
        kTableKernel.seal_blocks(s, counter.data(), x.data(), in, out, blocks);
        EXPECT_EQ(ToHex(out, size), ToHex(want));
        EXPECT_EQ(ToHex(counter), ToHex(want_counter));
        EXPECT_EQ(ToHex(x), ToHex(want_x));

        // Open the reference ciphertext: GHASH also absorbs the ciphertext.
        std::copy(want.begin(), want.end(), in);
        counter = counter0;
        x = x0;
        kTableKernel.open_blocks(s, counter.data(), x.data(), in, out, blocks);
        EXPECT_EQ(ToHex(out, size), ToHex(plaintext));
        EXPECT_EQ(ToHex(counter), ToHex(want_counter));
        EXPECT_EQ(ToHex(x), ToHex(want_x));

        // inc32 wraps the low word and leaves the upper 96 bits alone.
        const uint32_t end = start + static_cast<uint32_t>(blocks);
        Bytes expected_counter = counter0;
        for (int i = 0; i < 4; ++i) expected_counter[12 + i] = static_cast<uint8_t>(end >> (24 - 8 * i));
        EXPECT_EQ(ToHex(counter), ToHex(expected_counter));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, BlocksTest,
                         ::testing::Values(Buffers::kSeparate, Buffers::kInPlace,
                                           Buffers::kMisaligned));

}  // namespace
}  // namespace sealbox::crypto::kernel
