// Checks the armv8_neon kernel against published vectors (FIPS-197, the GCM spec)
// and against plain reference code in this file; also the assembly loops on their
// own (every length they can see, counter wrap, in place, odd alignment) and their
// calling convention.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "crypto/armv8_neon/aes_neon.h"
#include "crypto/armv8_neon/armv8_neon.h"
#include "crypto/armv8_neon/ghash_neon.h"
#include "crypto/kernel/kernel.h"
#include "crypto/testing/abi_check.h"
#include "gtest/gtest.h"

namespace sealbox::crypto::kernel {
namespace {

using Bytes = std::vector<uint8_t>;

const Kernel& kNeon = kArmv8NeonKernel;

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
    out += kDigits[data[i] & 15];
  }
  return out;
}

std::string ToHex(const Bytes& data) { return ToHex(data.data(), data.size()); }

Bytes RandomBytes(std::mt19937& rng, size_t size) {
  Bytes out(size);
  for (uint8_t& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

// KeySchedule is 4 KiB: kept on the heap.
std::unique_ptr<KeySchedule> Expand(const Bytes& key) {
  auto schedule = std::make_unique<KeySchedule>();
  kNeon.expand_key(key.data(), key.size(), schedule.get());
  return schedule;
}

// ---------------------------------------------------------------------------
// Reference AES: FIPS-197 byte by byte, the S-box from its definition.
// ---------------------------------------------------------------------------

uint8_t Times2(uint8_t a) { return static_cast<uint8_t>((a << 1) ^ (a & 0x80 ? 0x1b : 0)); }

uint8_t Multiply(uint8_t a, uint8_t b) {
  uint8_t product = 0;
  for (; b != 0; b >>= 1, a = Times2(a)) {
    if (b & 1) product ^= a;
  }
  return product;
}

uint8_t SboxByDefinition(uint8_t x) {
  uint8_t inverse = 0;
  for (int y = 1; y < 256 && x != 0; ++y) {
    if (Multiply(x, static_cast<uint8_t>(y)) == 1) inverse = static_cast<uint8_t>(y);
  }
  uint8_t s = 0x63;
  for (int i = 0; i < 5; ++i) {
    s ^= static_cast<uint8_t>((inverse << i) | (inverse >> ((8 - i) & 7)));
  }
  return s;
}

class ReferenceAes {
 public:
  explicit ReferenceAes(const Bytes& key) {
    static const std::array<uint8_t, 256> sbox = [] {
      std::array<uint8_t, 256> s;
      for (int x = 0; x < 256; ++x) s[x] = SboxByDefinition(static_cast<uint8_t>(x));
      return s;
    }();
    std::copy(sbox.begin(), sbox.end(), sbox_);
    const size_t nk = key.size() / 4;
    rounds_ = static_cast<int>(nk) + 6;
    w_ = key;
    uint8_t rcon = 1;
    for (size_t i = nk; i < 4 * static_cast<size_t>(rounds_ + 1); ++i) {
      uint8_t t[4];
      std::memcpy(t, &w_[4 * i - 4], 4);
      if (i % nk == 0) {
        const uint8_t t0 = t[0];
        t[0] = static_cast<uint8_t>(sbox_[t[1]] ^ rcon);
        t[1] = sbox_[t[2]];
        t[2] = sbox_[t[3]];
        t[3] = sbox_[t0];
        rcon = Times2(rcon);
      } else if (nk > 6 && i % nk == 4) {
        for (uint8_t& b : t) b = sbox_[b];
      }
      for (int j = 0; j < 4; ++j) w_.push_back(w_[4 * (i - nk) + j] ^ t[j]);
    }
  }

  Bytes Encrypt(const uint8_t* in) const {
    Bytes s(in, in + 16);
    for (int round = 0; round <= rounds_; ++round) {
      if (round > 0) {
        Bytes t(16);
        for (int c = 0; c < 4; ++c) {
          for (int r = 0; r < 4; ++r) t[4 * c + r] = sbox_[s[4 * ((c + r) % 4) + r]];
        }
        if (round < rounds_) {
          for (int c = 0; c < 4; ++c) {
            const uint8_t* a = &t[4 * c];
            for (int r = 0; r < 4; ++r) {
              s[4 * c + r] = Multiply(a[r], 2) ^ Multiply(a[(r + 1) % 4], 3) ^
                             a[(r + 2) % 4] ^ a[(r + 3) % 4];
            }
          }
        } else {
          s = t;
        }
      }
      for (int i = 0; i < 16; ++i) s[i] ^= w_[16 * round + i];
    }
    return s;
  }

  uint8_t Sbox(int x) const { return sbox_[x]; }

 private:
  uint8_t sbox_[256];
  int rounds_;
  Bytes w_;
};

// ---------------------------------------------------------------------------
// Reference GHASH: SP 800-38D Algorithm 1, one bit at a time; inc32.
// ---------------------------------------------------------------------------

void ReferenceMultiply(uint8_t x[16], const uint8_t h[16]) {
  uint8_t z[16] = {}, v[16];
  std::memcpy(v, h, 16);
  for (int i = 0; i < 128; ++i) {
    if ((x[i / 8] >> (7 - i % 8)) & 1) {
      for (int j = 0; j < 16; ++j) z[j] ^= v[j];
    }
    const bool carry = v[15] & 1;
    for (int j = 15; j > 0; --j) v[j] = static_cast<uint8_t>((v[j] >> 1) | (v[j - 1] << 7));
    v[0] = static_cast<uint8_t>((v[0] >> 1) ^ (carry ? 0xe1 : 0));
  }
  std::memcpy(x, z, 16);
}

void ReferenceGhash(const uint8_t h[16], uint8_t x[16], const uint8_t* in,
                    size_t blocks) {
  for (size_t b = 0; b < blocks; ++b) {
    for (int j = 0; j < 16; ++j) x[j] ^= in[16 * b + j];
    ReferenceMultiply(x, h);
  }
}

void Increment32(uint8_t counter[16]) {
  for (int i = 15; i >= 12 && ++counter[i] == 0; --i) {
  }
}

// seal_blocks by the reference: CTR from ReferenceAes, then GHASH of the output.
void ReferenceSeal(const ReferenceAes& aes, const uint8_t h[16], uint8_t counter[16],
                   uint8_t x[16], const uint8_t* in, uint8_t* out, size_t blocks) {
  for (size_t b = 0; b < blocks; ++b) {
    const Bytes keystream = aes.Encrypt(counter);
    Increment32(counter);
    for (int i = 0; i < 16; ++i) out[16 * b + i] = in[16 * b + i] ^ keystream[i];
  }
  ReferenceGhash(h, x, out, blocks);
}

// ---------------------------------------------------------------------------
// GCM with a 96-bit IV over the kernel, for the spec's test cases.
// ---------------------------------------------------------------------------

void GhashPadded(const KeySchedule& schedule, uint8_t x[16], const Bytes& data) {
  const size_t whole = data.size() / 16;
  kNeon.ghash(schedule, x, data.data(), whole);
  if (data.size() % 16 != 0) {
    uint8_t block[16] = {};
    std::memcpy(block, data.data() + 16 * whole, data.size() % 16);
    kNeon.ghash(schedule, x, block, 1);
  }
}

// Returns ciphertext || tag.
Bytes GcmSeal(const Bytes& key, const Bytes& iv, const Bytes& aad, const Bytes& plaintext) {
  const auto schedule = Expand(key);
  uint8_t j0[16] = {};
  std::memcpy(j0, iv.data(), 12);
  j0[15] = 1;
  uint8_t counter[16];
  std::memcpy(counter, j0, 16);
  Increment32(counter);
  uint8_t x[16] = {};
  GhashPadded(*schedule, x, aad);
  Bytes out(plaintext.size());
  const size_t whole = plaintext.size() / 16;
  kNeon.seal_blocks(*schedule, counter, x, plaintext.data(), out.data(), whole);
  if (plaintext.size() % 16 != 0) {
    uint8_t keystream[16];
    kNeon.encrypt_block(*schedule, counter, keystream);
    for (size_t i = 16 * whole; i < plaintext.size(); ++i) {
      out[i] = plaintext[i] ^ keystream[i - 16 * whole];
    }
  }
  GhashPadded(*schedule, x, Bytes(out.begin() + 16 * whole, out.end()));
  uint8_t lengths[16] = {};
  const uint64_t bits[2] = {aad.size() * 8, plaintext.size() * 8};
  for (int i = 0; i < 16; ++i) {
    lengths[i] = static_cast<uint8_t>(bits[i / 8] >> (56 - 8 * (i % 8)));
  }
  kNeon.ghash(*schedule, x, lengths, 1);
  uint8_t mask[16];
  kNeon.encrypt_block(*schedule, j0, mask);
  for (int i = 0; i < 16; ++i) out.push_back(x[i] ^ mask[i]);
  return out;
}

// ---------------------------------------------------------------------------
// Tests.
// ---------------------------------------------------------------------------

TEST(Armv8NeonKernelTest, Identity) {
  EXPECT_STREQ(kNeon.name, "armv8_neon");
  EXPECT_TRUE(kNeon.constant_time);
}

// The table the assembly loads into registers: the S-box, then the two
// permutations (ShiftRows, and ShiftRows followed by a one-row column rotation).
TEST(Armv8NeonKernelTest, TablesMatchDefinitions) {
  const ReferenceAes aes(Bytes(16, 0));
  const uint8_t* tables = armv8_neon::AesTables();
  for (int x = 0; x < 256; ++x) {
    ASSERT_EQ(tables[x], aes.Sbox(x)) << "S-box entry " << x;
  }
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(tables[256 + 4 * c + r], 4 * ((c + r) % 4) + r);
      const int r1 = (r + 1) % 4;
      EXPECT_EQ(tables[272 + 4 * c + r], 4 * ((c + r1) % 4) + r1);
    }
  }
}

TEST(Armv8NeonKernelTest, Fips197AppendixC) {
  const std::pair<const char*, const char*> cases[] = {
      {"000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"},
      {"000102030405060708090a0b0c0d0e0f1011121314151617",
       "dda97ca4864cdfe06eaf70a0ec0d7191"},
      {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "8ea2b7ca516745bfeafc49904b496089"},
  };
  const Bytes plaintext = FromHex("00112233445566778899aabbccddeeff");
  for (const auto& [key, ciphertext] : cases) {
    const auto schedule = Expand(FromHex(key));
    uint8_t out[16];
    kNeon.encrypt_block(*schedule, plaintext.data(), out);
    EXPECT_EQ(ToHex(out, 16), ciphertext) << "key " << key;
    uint8_t block[16];
    std::memcpy(block, plaintext.data(), 16);
    kNeon.encrypt_block(*schedule, block, block);
    EXPECT_EQ(ToHex(block, 16), ciphertext) << "in place, key " << key;
  }
}

TEST(Armv8NeonKernelTest, AesMatchesReference) {
  std::mt19937 rng(1);
  for (size_t key_bytes : {16, 24, 32}) {
    for (int trial = 0; trial < 50; ++trial) {
      const Bytes key = RandomBytes(rng, key_bytes);
      const auto schedule = Expand(key);
      const ReferenceAes reference(key);
      for (int i = 0; i < 4; ++i) {
        const Bytes block = RandomBytes(rng, 16);
        uint8_t out[16];
        kNeon.encrypt_block(*schedule, block.data(), out);
        ASSERT_EQ(ToHex(out, 16), ToHex(reference.Encrypt(block.data())))
            << "key " << ToHex(key) << " block " << ToHex(block);
      }
    }
  }
}

TEST(Armv8NeonKernelTest, GcmSpecVectors) {
  struct Case {
    std::string key, iv, aad, plaintext, ciphertext, tag;
  };
  const std::string k3 = "feffe9928665731c6d6a8f9467308308";
  const std::string iv3 = "cafebabefacedbaddecaf888";
  const std::string aad4 = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
  const std::string p3 =
      "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
      "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
  const std::string p4 = p3.substr(0, 120);
  const std::string zero16(32, '0'), zero24(48, '0'), zero32(64, '0'), iv0(24, '0');
  const Case cases[] = {
      // McGrew and Viega, test cases 1-4 (AES-128), 7, 8 and 12 (AES-192),
      // 13-16 (AES-256).
      {zero16, iv0, "", "", "", "58e2fccefa7e3061367f1d57a4e7455a"},
      {zero16, iv0, "", zero16, "0388dace60b6a392f328c2b971b2fe78",
       "ab6e47d42cec13bdf53a67b21257bddf"},
      {k3, iv3, "", p3,
       "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
       "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
       "4d5c2af327cd64a62cf35abd2ba6fab4"},
      {k3, iv3, aad4, p4,
       "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
       "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
       "5bc94fbc3221a5db94fae95ae7121a47"},
      {zero24, iv0, "", "", "", "cd33b28ac773f74ba00ed1f312572435"},
      {zero24, iv0, "", zero16, "98e7247c07f0fe411c267e4384b0f600",
       "2ff58d80033927ab8ef4d4587514f0fb"},
      {k3 + k3.substr(0, 16), iv3, aad4, p4,
       "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
       "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710",
       "2519498e80f1478f37ba55bd6d27618c"},
      {zero32, iv0, "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"},
      {zero32, iv0, "", zero16, "cea7403d4d606b6e074ec5d3baf39d18",
       "d0d1c8a799996bf0265b98b5d48ab919"},
      {k3 + k3, iv3, "", p3,
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
       "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
       "b094dac5d93471bdec1a502270e3cc6c"},
      {k3 + k3, iv3, aad4, p4,
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
       "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
       "76fc6ece0f4e1768cddf8853bb2d551b"},
  };
  for (const Case& c : cases) {
    const Bytes sealed =
        GcmSeal(FromHex(c.key), FromHex(c.iv), FromHex(c.aad), FromHex(c.plaintext));
    EXPECT_EQ(ToHex(sealed), c.ciphertext + c.tag) << "key " << c.key << " aad " << c.aad;
  }
}

// Every block count up to 40 and some past several groups of eight, with dense
// operands (all ones) among random ones, at an odd address.
TEST(Armv8NeonKernelTest, GhashMatchesReference) {
  std::mt19937 rng(2);
  std::vector<size_t> counts;
  for (size_t n = 0; n <= 40; ++n) counts.push_back(n);
  for (size_t n : {63, 64, 65, 127, 128, 129, 300}) counts.push_back(n);
  for (int trial = 0; trial < 8; ++trial) {
    const auto schedule = Expand(RandomBytes(rng, 16 + 8 * (trial % 3)));
    uint8_t h[16] = {};
    kNeon.encrypt_block(*schedule, h, h);
    for (size_t blocks : counts) {
      Bytes buffer = RandomBytes(rng, 16 * blocks + 1);
      if (blocks % 3 == 0) std::fill(buffer.begin(), buffer.end(), 0xff);
      const uint8_t* data = buffer.data() + 1;
      const Bytes start = trial == 0 ? Bytes(16, 0xff) : RandomBytes(rng, 16);
      uint8_t x[16], expected[16];
      std::memcpy(x, start.data(), 16);
      std::memcpy(expected, start.data(), 16);
      kNeon.ghash(*schedule, x, data, blocks);
      ReferenceGhash(h, expected, data, blocks);
      ASSERT_EQ(ToHex(x, 16), ToHex(expected, 16))
          << "trial " << trial << " blocks " << blocks;
    }
  }
}

// The eight-block loop and the one-block path agree for every position of a
// single set bit, in the data and in x.
TEST(Armv8NeonKernelTest, GhashGroupMatchesSingleBlocksBitByBit) {
  const auto schedule = Expand(FromHex("000102030405060708090a0b0c0d0e0f"));
  for (int bit = 0; bit < 9 * 128; ++bit) {
    uint8_t data[128] = {}, x_group[16] = {}, x_single[16] = {};
    if (bit < 8 * 128) {
      data[bit / 8] = static_cast<uint8_t>(1 << (bit % 8));
    } else {
      x_group[(bit % 128) / 8] = x_single[(bit % 128) / 8] =
          static_cast<uint8_t>(1 << (bit % 8));
    }
    kNeon.ghash(*schedule, x_group, data, 8);
    for (int b = 0; b < 8; ++b) kNeon.ghash(*schedule, x_single, data + 16 * b, 1);
    ASSERT_EQ(ToHex(x_group, 16), ToHex(x_single, 16)) << "bit " << bit;
  }
}

// seal_blocks and open_blocks against the reference for every block count up to 40
// and some larger ones (across the kernel's 128-block stretches), counters at and
// about to wrap, in place and not, at odd alignments.
TEST(Armv8NeonKernelTest, SealAndOpenMatchReference) {
  std::mt19937 rng(3);
  const uint32_t starts[] = {0, 1, 0xfffffff0, 0xfffffffb, 0xfffffffe, 0xffffffff};
  std::vector<size_t> counts;
  for (size_t n = 0; n <= 40; ++n) counts.push_back(n);
  for (size_t n : {61, 64, 127, 128, 129, 131, 256, 261}) counts.push_back(n);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const auto schedule = Expand(key);
    const ReferenceAes aes(key);
    const Bytes h = aes.Encrypt(Bytes(16, 0).data());
    for (size_t blocks : counts) {
      for (uint32_t start : starts) {
        for (bool in_place : {false, true}) {
          const size_t size = 16 * blocks;
          const size_t in_offset = (blocks + start) % 16;
          const size_t out_offset = in_place ? in_offset : (blocks * 3 + 5) % 16;
          const Bytes plaintext = RandomBytes(rng, size);
          Bytes counter_start = RandomBytes(rng, 16);
          for (int i = 0; i < 4; ++i) {
            counter_start[12 + i] = static_cast<uint8_t>(start >> (24 - 8 * i));
          }
          const Bytes x_start = RandomBytes(rng, 16);

          Bytes expected(size);
          uint8_t ref_counter[16], ref_x[16];
          std::memcpy(ref_counter, counter_start.data(), 16);
          std::memcpy(ref_x, x_start.data(), 16);
          ReferenceSeal(aes, h.data(), ref_counter, ref_x, plaintext.data(),
                        expected.data(), blocks);

          Bytes in_buffer(size + 16), out_buffer(size + 16);
          uint8_t* in = in_buffer.data() + in_offset;
          uint8_t* out = in_place ? in : out_buffer.data() + out_offset;
          if (size > 0) std::memcpy(in, plaintext.data(), size);
          uint8_t counter[16], x[16];
          std::memcpy(counter, counter_start.data(), 16);
          std::memcpy(x, x_start.data(), 16);
          kNeon.seal_blocks(*schedule, counter, x, in, out, blocks);
          const std::string where = "key_bytes " + std::to_string(key_bytes) +
                                    " blocks " + std::to_string(blocks) + " start " +
                                    std::to_string(start) + " in_place " +
                                    std::to_string(in_place);
          ASSERT_EQ(ToHex(out, size), ToHex(expected)) << where;
          ASSERT_EQ(ToHex(counter, 16), ToHex(ref_counter, 16)) << where;
          ASSERT_EQ(ToHex(x, 16), ToHex(ref_x, 16)) << where;

          uint8_t* opened = in_place ? out : in;
          std::memcpy(counter, counter_start.data(), 16);
          std::memcpy(x, x_start.data(), 16);
          kNeon.open_blocks(*schedule, counter, x, out, opened, blocks);
          ASSERT_EQ(ToHex(opened, size), ToHex(plaintext)) << where;
          ASSERT_EQ(ToHex(counter, 16), ToHex(ref_counter, 16)) << where;
          ASSERT_EQ(ToHex(x, 16), ToHex(ref_x, 16)) << where;
        }
      }
    }
  }
}

// The assembly loops on their own: each 4-block group of the counter-mode loop
// against encrypt_block, with the counter running over 2^32.
TEST(Armv8NeonKernelTest, CounterLoopsWrapAndAdvance) {
  std::mt19937 rng(4);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    armv8_neon::AesKey aes;
    armv8_neon::ExpandAesKey(key.data(), key.size(), &aes);
    auto* loop = key_bytes == 16   ? armv8_neon_ctr128_blocks
                 : key_bytes == 24 ? armv8_neon_ctr192_blocks
                                   : armv8_neon_ctr256_blocks;
    for (size_t quads : {1, 2, 3, 5}) {
      const Bytes in = RandomBytes(rng, 64 * quads);
      Bytes out(64 * quads);
      uint8_t counter[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xff, 0xff, 0xff, 0xfa};
      uint8_t expected_counter[16];
      std::memcpy(expected_counter, counter, 16);
      Bytes expected(64 * quads);
      for (size_t b = 0; b < 4 * quads; ++b) {
        uint8_t keystream[16];
        armv8_neon::AesEncryptBlock(aes, expected_counter, keystream);
        Increment32(expected_counter);
        for (int i = 0; i < 16; ++i) expected[16 * b + i] = in[16 * b + i] ^ keystream[i];
      }
      loop(aes.round_keys[0], counter, in.data(), out.data(), quads);
      EXPECT_EQ(ToHex(out), ToHex(expected)) << key_bytes << " " << quads;
      EXPECT_EQ(ToHex(counter, 16), ToHex(expected_counter, 16)) << key_bytes << " " << quads;
    }
  }
}

// The hand-written loops keep the callee-saved registers (x19-x29, d8-d15) and sp.
TEST(Armv8NeonKernelTest, AssemblyKeepsCallingConvention) {
  std::mt19937 rng(5);
  const Bytes key = RandomBytes(rng, 32);
  armv8_neon::AesKey aes;
  armv8_neon::ExpandAesKey(key.data(), key.size(), &aes);
  auto ghash_key = std::make_unique<armv8_neon::GhashKey>();
  armv8_neon::InitGhashKey(RandomBytes(rng, 16).data(), ghash_key.get());
  const Bytes in = RandomBytes(rng, 256);
  Bytes out(256);
  uint8_t counter[16] = {}, x[16] = {};
  for (auto* loop : {armv8_neon_ctr128_blocks, armv8_neon_ctr192_blocks,
                     armv8_neon_ctr256_blocks}) {
    EXPECT_EQ(test::AbiCheckedCall(loop, aes.round_keys[0], counter, in.data(),
                                   out.data(), size_t{2}),
              "");
  }
  EXPECT_EQ(test::AbiCheckedCall(armv8_neon_ghash_blocks, ghash_key.get(), x, in.data(),
                                 size_t{2}),
            "");
  // And the whole kernel.
  const auto schedule = Expand(key);
  EXPECT_EQ(test::AbiCheckedCall(kNeon.seal_blocks, *schedule, counter, x, in.data(),
                                 out.data(), size_t{13}),
            "");
  EXPECT_EQ(test::AbiCheckedCall(kNeon.open_blocks, *schedule, counter, x, out.data(),
                                 out.data(), size_t{13}),
            "");
  EXPECT_EQ(test::AbiCheckedCall(kNeon.ghash, *schedule, x, in.data(), size_t{11}), "");
}

}  // namespace
}  // namespace sealbox::crypto::kernel
