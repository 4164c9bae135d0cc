// Checks both armv8_ce kernels against published vectors (FIPS-197, the GCM
// spec) and against simple, independent reference code in this file; and checks
// that every assembly entry point keeps the AAPCS64 callee-saved registers and
// touches no byte outside its buffers. AArch64 only; the EOR3 kernel's tests
// skip themselves on CPUs without SHA3.
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "crypto/armv8_ce/armv8_ce.h"
#include "crypto/kernel/kernel.h"
#include "crypto/testing/abi_check.h"
#include "gtest/gtest.h"

// The bits of AT_HWCAP (<asm/hwcap.h>) the kernels need.
constexpr unsigned long kHwcapAes = 1ul << 3;
constexpr unsigned long kHwcapPmull = 1ul << 4;
constexpr unsigned long kHwcapSha3 = 1ul << 17;

extern "C" {
void sealbox_armv8_ce_expand_key(const uint8_t*, size_t, uint8_t*);
void sealbox_armv8_ce_encrypt_block(const uint8_t*, const uint8_t*, uint8_t*);
void sealbox_armv8_ce_ghash(const uint8_t*, uint8_t*, const uint8_t*, size_t);
void sealbox_armv8_ce_ghash_eor3(const uint8_t*, uint8_t*, const uint8_t*, size_t);
void sealbox_armv8_ce_seal_blocks(const uint8_t*, uint8_t*, uint8_t*,
                                  const uint8_t*, uint8_t*, size_t);
void sealbox_armv8_ce_open_blocks(const uint8_t*, uint8_t*, uint8_t*,
                                  const uint8_t*, uint8_t*, size_t);
void sealbox_armv8_ce_seal_blocks_eor3(const uint8_t*, uint8_t*, uint8_t*,
                                       const uint8_t*, uint8_t*, size_t);
void sealbox_armv8_ce_open_blocks_eor3(const uint8_t*, uint8_t*, uint8_t*,
                                       const uint8_t*, uint8_t*, size_t);
}

namespace sealbox::crypto::kernel {
namespace {

using Bytes = std::vector<uint8_t>;

bool CpuHas(unsigned long bits) { return (getauxval(AT_HWCAP) & bits) == bits; }

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

// ---------------------------------------------------------------------------
// Reference AES: byte-oriented FIPS-197, S-box computed from its definition.
// ---------------------------------------------------------------------------

uint8_t GfMul(uint8_t a, uint8_t b) {
  uint8_t r = 0;
  for (; b != 0; b >>= 1) {
    if (b & 1) r ^= a;
    a = static_cast<uint8_t>((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
  }
  return r;
}

uint8_t ReferenceSbox(uint8_t x) {
  uint8_t inverse = 0;
  for (int y = 1; y < 256 && x != 0; ++y) {
    if (GfMul(x, static_cast<uint8_t>(y)) == 1) inverse = static_cast<uint8_t>(y);
  }
  uint8_t s = 0x63;
  for (int i = 0; i < 5; ++i) {
    s ^= static_cast<uint8_t>((inverse << i) | (inverse >> (8 - i)));
  }
  return s;
}

const uint8_t* Sbox() {
  static const auto* table = [] {
    auto* t = new uint8_t[256];
    for (int x = 0; x < 256; ++x) t[x] = ReferenceSbox(static_cast<uint8_t>(x));
    return t;
  }();
  return table;
}

class ReferenceAes {
 public:
  explicit ReferenceAes(const Bytes& key) : sbox_(Sbox()) {
    const size_t nk = key.size() / 4;
    rounds_ = static_cast<int>(nk) + 6;
    w_.assign(key.begin(), key.end());
    uint8_t rcon = 1;
    for (size_t i = nk; i < 4 * static_cast<size_t>(rounds_ + 1); ++i) {
      uint8_t t[4] = {w_[4 * i - 4], w_[4 * i - 3], w_[4 * i - 2], w_[4 * i - 1]};
      if (i % nk == 0) {
        const uint8_t first = t[0];
        t[0] = sbox_[t[1]] ^ rcon;
        t[1] = sbox_[t[2]];
        t[2] = sbox_[t[3]];
        t[3] = sbox_[first];
        rcon = GfMul(rcon, 2);
      } else if (nk > 6 && i % nk == 4) {
        for (uint8_t& b : t) b = sbox_[b];
      }
      for (int j = 0; j < 4; ++j) w_.push_back(w_[4 * (i - nk) + j] ^ t[j]);
    }
  }

  void Encrypt(const uint8_t in[16], uint8_t out[16]) const {
    uint8_t s[16];
    std::memcpy(s, in, 16);
    AddRoundKey(s, 0);
    for (int r = 1; r <= rounds_; ++r) {
      uint8_t shifted[16];
      for (int c = 0; c < 4; ++c) {
        for (int row = 0; row < 4; ++row) {
          shifted[4 * c + row] = sbox_[s[4 * ((c + row) % 4) + row]];
        }
      }
      std::memcpy(s, shifted, 16);
      if (r != rounds_) {
        for (int c = 0; c < 4; ++c) {
          const uint8_t* a = &s[4 * c];
          const uint8_t mixed[4] = {
              static_cast<uint8_t>(GfMul(a[0], 2) ^ GfMul(a[1], 3) ^ a[2] ^ a[3]),
              static_cast<uint8_t>(a[0] ^ GfMul(a[1], 2) ^ GfMul(a[2], 3) ^ a[3]),
              static_cast<uint8_t>(a[0] ^ a[1] ^ GfMul(a[2], 2) ^ GfMul(a[3], 3)),
              static_cast<uint8_t>(GfMul(a[0], 3) ^ a[1] ^ a[2] ^ GfMul(a[3], 2))};
          std::memcpy(&s[4 * c], mixed, 4);
        }
      }
      AddRoundKey(s, r);
    }
    std::memcpy(out, s, 16);
  }

  Bytes Encrypt(const Bytes& in) const {
    Bytes out(16);
    Encrypt(in.data(), out.data());
    return out;
  }

 private:
  void AddRoundKey(uint8_t s[16], int round) const {
    for (int i = 0; i < 16; ++i) s[i] ^= w_[16 * round + i];
  }

  const uint8_t* sbox_;
  int rounds_;
  Bytes w_;
};

// ---------------------------------------------------------------------------
// Reference GHASH: SP 800-38D Algorithm 1, one bit at a time.
// ---------------------------------------------------------------------------

void ReferenceMultiply(uint8_t x[16], const uint8_t h[16]) {
  uint8_t z[16] = {};
  uint8_t v[16];
  std::memcpy(v, h, 16);
  for (int i = 0; i < 128; ++i) {
    if ((x[i / 8] >> (7 - i % 8)) & 1) {
      for (int j = 0; j < 16; ++j) z[j] ^= v[j];
    }
    const bool lsb = v[15] & 1;
    for (int j = 15; j > 0; --j)
      v[j] = static_cast<uint8_t>((v[j] >> 1) | (v[j - 1] << 7));
    v[0] >>= 1;
    if (lsb) v[0] ^= 0xe1;
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

void ReferenceIncrement32(uint8_t counter[16]) {
  for (int i = 15; i >= 12; --i) {
    if (++counter[i] != 0) break;
  }
}

// CTR keystream xor `in` and the GHASH of the ciphertext, from the references.
struct ReferenceCrypt {
  Bytes out;
  uint8_t counter[16];
  uint8_t x[16];
};

ReferenceCrypt ReferenceSeal(const ReferenceAes& aes, const uint8_t h[16],
                             const Bytes& counter, const Bytes& x,
                             const Bytes& plaintext) {
  ReferenceCrypt r;
  r.out.resize(plaintext.size());
  std::memcpy(r.counter, counter.data(), 16);
  std::memcpy(r.x, x.data(), 16);
  for (size_t b = 0; b < plaintext.size() / 16; ++b) {
    uint8_t keystream[16];
    aes.Encrypt(r.counter, keystream);
    ReferenceIncrement32(r.counter);
    for (int i = 0; i < 16; ++i) r.out[16 * b + i] = plaintext[16 * b + i] ^ keystream[i];
  }
  ReferenceGhash(h, r.x, r.out.data(), plaintext.size() / 16);
  return r;
}

// ---------------------------------------------------------------------------
// Memory that faults just past its end, so that reading or writing one byte
// beyond a buffer placed at the end crashes the test.
// ---------------------------------------------------------------------------

class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t size) {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    mapped_ = (size + page_ - 1) / page_ * page_ + page_;
    base_ = static_cast<uint8_t*>(
        mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0));
    EXPECT_NE(base_, MAP_FAILED);
    EXPECT_EQ(mprotect(base_ + mapped_ - page_, page_, PROT_NONE), 0);
    data_ = base_ + mapped_ - page_ - size;
  }
  ~GuardedBuffer() { munmap(base_, mapped_); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  uint8_t* data() { return data_; }

 private:
  size_t page_;
  size_t mapped_;
  uint8_t* base_;
  uint8_t* data_;
};

// ---------------------------------------------------------------------------
// Tests, for both kernels.
// ---------------------------------------------------------------------------

struct KernelCase {
  const Kernel* kernel;
  const char* name;
  unsigned long hwcaps;
};

class Armv8CeKernelTest : public testing::TestWithParam<KernelCase> {
 protected:
  void SetUp() override {
    if (!CpuHas(GetParam().hwcaps)) {
      GTEST_SKIP() << "this CPU lacks a feature " << GetParam().name << " needs";
    }
  }

  const Kernel& kernel() const { return *GetParam().kernel; }

  KeySchedule Expand(const Bytes& key) const {
    KeySchedule schedule;
    kernel().expand_key(key.data(), key.size(), &schedule);
    return schedule;
  }

  // Returns ciphertext || tag for a 96-bit IV, GCM built from the kernel.
  Bytes GcmSeal(const Bytes& key, const Bytes& iv, const Bytes& aad,
                const Bytes& plaintext) const {
    const KeySchedule schedule = Expand(key);
    uint8_t j0[16] = {};
    std::memcpy(j0, iv.data(), 12);
    j0[15] = 1;
    uint8_t counter[16];
    std::memcpy(counter, j0, 16);
    ReferenceIncrement32(counter);
    uint8_t x[16] = {};
    GhashPadded(schedule, x, aad);
    Bytes out(plaintext.size());
    const size_t whole = plaintext.size() / 16;
    kernel().seal_blocks(schedule, counter, x, plaintext.data(), out.data(), whole);
    const size_t rest = plaintext.size() % 16;
    if (rest != 0) {
      uint8_t keystream[16];
      kernel().encrypt_block(schedule, counter, keystream);
      for (size_t i = 0; i < rest; ++i) {
        out[16 * whole + i] = plaintext[16 * whole + i] ^ keystream[i];
      }
    }
    GhashPadded(schedule, x, Bytes(out.begin() + 16 * whole, out.end()));
    uint8_t lengths[16] = {};
    const uint64_t bits[2] = {aad.size() * 8, plaintext.size() * 8};
    for (int i = 0; i < 16; ++i)
      lengths[i] = static_cast<uint8_t>(bits[i / 8] >> (56 - 8 * (i % 8)));
    kernel().ghash(schedule, x, lengths, 1);
    uint8_t mask[16];
    kernel().encrypt_block(schedule, j0, mask);
    for (int i = 0; i < 16; ++i) out.push_back(x[i] ^ mask[i]);
    return out;
  }

  void GhashPadded(const KeySchedule& schedule, uint8_t x[16],
                   const Bytes& data) const {
    const size_t whole = data.size() / 16;
    kernel().ghash(schedule, x, data.data(), whole);
    if (data.size() % 16 != 0) {
      uint8_t block[16] = {};
      std::memcpy(block, data.data() + 16 * whole, data.size() % 16);
      kernel().ghash(schedule, x, block, 1);
    }
  }
};

TEST_P(Armv8CeKernelTest, Identity) {
  EXPECT_STREQ(kernel().name, GetParam().name);
  EXPECT_TRUE(kernel().constant_time);
}

TEST_P(Armv8CeKernelTest, Fips197AppendixC) {
  struct Case {
    const char* key;
    const char* ciphertext;
  };
  const Case cases[] = {
      {"000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"},
      {"000102030405060708090a0b0c0d0e0f1011121314151617",
       "dda97ca4864cdfe06eaf70a0ec0d7191"},
      {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "8ea2b7ca516745bfeafc49904b496089"},
  };
  const Bytes plaintext = FromHex("00112233445566778899aabbccddeeff");
  for (const Case& c : cases) {
    const KeySchedule schedule = Expand(FromHex(c.key));
    uint8_t out[16];
    kernel().encrypt_block(schedule, plaintext.data(), out);
    EXPECT_EQ(ToHex(out, 16), c.ciphertext) << "key " << c.key;
    uint8_t block[16];
    std::memcpy(block, plaintext.data(), 16);
    kernel().encrypt_block(schedule, block, block);
    EXPECT_EQ(ToHex(block, 16), c.ciphertext) << "key " << c.key << ", in place";
  }
}

TEST_P(Armv8CeKernelTest, AesMatchesReference) {
  std::mt19937 rng(1);
  for (size_t key_bytes : {16, 24, 32}) {
    for (int trial = 0; trial < 20; ++trial) {
      const Bytes key = RandomBytes(rng, key_bytes);
      const KeySchedule schedule = Expand(key);
      const ReferenceAes reference(key);
      for (int i = 0; i < 4; ++i) {
        const Bytes block = RandomBytes(rng, 16);
        uint8_t out[16];
        kernel().encrypt_block(schedule, block.data(), out);
        ASSERT_EQ(ToHex(out, 16), ToHex(reference.Encrypt(block)))
            << "key " << ToHex(key) << " block " << ToHex(block);
      }
    }
  }
}

TEST_P(Armv8CeKernelTest, GcmSpecVectors) {
  struct Case {
    const char* key;
    const char* iv;
    const char* aad;
    const char* plaintext;
    const char* ciphertext;
    const char* tag;
  };
  const char* k3 = "feffe9928665731c6d6a8f9467308308";
  const char* iv3 = "cafebabefacedbaddecaf888";
  const char* aad4 = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
  const std::string p3 =
      "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
      "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
  const std::string p4 = p3.substr(0, 120);
  const std::string k16 = std::string(k3) + k3;
  const std::string k12 = std::string(k3) + std::string(k3).substr(0, 16);
  const std::string zero16(32, '0'), zero24(48, '0'), zero32(64, '0'), iv0(24, '0');
  const Case cases[] = {
      // McGrew and Viega, test cases 1-4 (AES-128).
      {zero16.c_str(), iv0.c_str(), "", "", "", "58e2fccefa7e3061367f1d57a4e7455a"},
      {zero16.c_str(), iv0.c_str(), "", zero16.c_str(),
       "0388dace60b6a392f328c2b971b2fe78", "ab6e47d42cec13bdf53a67b21257bddf"},
      {k3, iv3, "", p3.c_str(),
       "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
       "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
       "4d5c2af327cd64a62cf35abd2ba6fab4"},
      {k3, iv3, aad4, p4.c_str(),
       "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
       "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
       "5bc94fbc3221a5db94fae95ae7121a47"},
      // Test cases 8 and 12 (AES-192).
      {zero24.c_str(), iv0.c_str(), "", zero16.c_str(),
       "98e7247c07f0fe411c267e4384b0f600", "2ff58d80033927ab8ef4d4587514f0fb"},
      {k12.c_str(), iv3, aad4, p4.c_str(),
       "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
       "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710",
       "2519498e80f1478f37ba55bd6d27618c"},
      // Test cases 13-16 (AES-256).
      {zero32.c_str(), iv0.c_str(), "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"},
      {zero32.c_str(), iv0.c_str(), "", zero16.c_str(),
       "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"},
      {k16.c_str(), iv3, "", p3.c_str(),
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
       "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
       "b094dac5d93471bdec1a502270e3cc6c"},
      {k16.c_str(), iv3, aad4, p4.c_str(),
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
       "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
       "76fc6ece0f4e1768cddf8853bb2d551b"},
  };
  for (const Case& c : cases) {
    const Bytes sealed =
        GcmSeal(FromHex(c.key), FromHex(c.iv), FromHex(c.aad), FromHex(c.plaintext));
    EXPECT_EQ(ToHex(sealed), std::string(c.ciphertext) + c.tag)
        << "key " << c.key << " aad " << c.aad;
  }
}

TEST_P(Armv8CeKernelTest, GhashMatchesReference) {
  std::mt19937 rng(2);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const KeySchedule schedule = Expand(key);
    uint8_t h[16] = {};
    ReferenceAes(key).Encrypt(h, h);
    std::vector<size_t> counts;
    for (size_t n = 0; n <= 40; ++n) counts.push_back(n);
    for (size_t n : {47, 48, 63, 64, 100, 129}) counts.push_back(n);
    for (size_t blocks : counts) {
      // Dense operands (all ones) exercise every carry-less product term.
      const Bytes data =
          blocks % 3 == 0 ? Bytes(16 * blocks, 0xff) : RandomBytes(rng, 16 * blocks);
      const Bytes start = RandomBytes(rng, 16);
      const size_t offset = blocks % 16;  // any alignment
      Bytes buffer(16 * blocks + 16);
      if (blocks > 0) std::memcpy(buffer.data() + offset, data.data(), data.size());
      uint8_t x[16], expected[16];
      std::memcpy(x, start.data(), 16);
      std::memcpy(expected, start.data(), 16);
      kernel().ghash(schedule, x, buffer.data() + offset, blocks);
      ReferenceGhash(h, expected, data.data(), blocks);
      ASSERT_EQ(ToHex(x, 16), ToHex(expected, 16))
          << "key_bytes " << key_bytes << " blocks " << blocks;
    }
  }
}

// seal_blocks and open_blocks against the reference CTR and GHASH: every block
// count up to 40 and some past the 16-block main loop's multiples, counters
// about to wrap (inc32 is modulo 2^32 and leaves the upper 96 bits alone), in
// place and out of place, at odd alignments.
TEST_P(Armv8CeKernelTest, SealAndOpenMatchReference) {
  std::mt19937 rng(3);
  const uint32_t starts[] = {0, 1, 0xfffffff0, 0xfffffff9, 0xfffffffe, 0xffffffff};
  std::vector<size_t> counts;
  for (size_t n = 0; n <= 40; ++n) counts.push_back(n);
  for (size_t n : {47, 48, 49, 63, 64, 65, 95, 100, 127, 128, 129, 255}) {
    counts.push_back(n);
  }
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const KeySchedule schedule = Expand(key);
    const ReferenceAes aes(key);
    uint8_t h[16] = {};
    aes.Encrypt(h, h);
    for (size_t blocks : counts) {
      for (uint32_t start : starts) {
        const size_t size = 16 * blocks;
        const Bytes plaintext = RandomBytes(rng, size);
        Bytes counter_start = RandomBytes(rng, 16);
        for (int i = 0; i < 4; ++i)
          counter_start[12 + i] = static_cast<uint8_t>(start >> (24 - 8 * i));
        const Bytes x_start = RandomBytes(rng, 16);
        const ReferenceCrypt expected =
            ReferenceSeal(aes, h, counter_start, x_start, plaintext);
        for (bool in_place : {false, true}) {
          const size_t in_offset = (blocks + start) % 8;
          const size_t out_offset = in_place ? in_offset : (blocks * 3 + 5) % 16;
          const std::string where = "key_bytes " + std::to_string(key_bytes) +
                                    " blocks " + std::to_string(blocks) + " start " +
                                    std::to_string(start) + " in_place " +
                                    std::to_string(in_place);
          // Guard bytes around the output catch stray writes.
          Bytes in_buffer(size + 32, 0xa5), out_buffer(size + 32, 0x5a);
          uint8_t* in = in_buffer.data() + in_offset;
          uint8_t* out = in_place ? in : out_buffer.data() + out_offset;
          if (size > 0) std::memcpy(in, plaintext.data(), size);
          const Bytes in_before = in_buffer, out_before = out_buffer;

          uint8_t counter[16], x[16];
          std::memcpy(counter, counter_start.data(), 16);
          std::memcpy(x, x_start.data(), 16);
          kernel().seal_blocks(schedule, counter, x, in, out, blocks);
          ASSERT_EQ(ToHex(out, size), ToHex(expected.out)) << where;
          ASSERT_EQ(ToHex(counter, 16), ToHex(expected.counter, 16)) << where;
          ASSERT_EQ(ToHex(x, 16), ToHex(expected.x, 16)) << where;
          Bytes& written = in_place ? in_buffer : out_buffer;
          const Bytes& before = in_place ? in_before : out_before;
          const size_t offset = in_place ? in_offset : out_offset;
          ASSERT_TRUE(std::equal(written.begin(), written.begin() + offset,
                                 before.begin()) &&
                      std::equal(written.begin() + offset + size, written.end(),
                                 before.begin() + offset + size))
              << where << ": wrote outside out";
          if (!in_place) {
            ASSERT_EQ(in_buffer, in_before) << where << ": wrote to in";
          }

          // Open what was sealed, into a third buffer or in place.
          Bytes opened_buffer(size + 32);
          uint8_t* opened = in_place ? out : opened_buffer.data() + (blocks % 16);
          std::memcpy(counter, counter_start.data(), 16);
          std::memcpy(x, x_start.data(), 16);
          kernel().open_blocks(schedule, counter, x, out, opened, blocks);
          ASSERT_EQ(ToHex(opened, size), ToHex(plaintext)) << where;
          ASSERT_EQ(ToHex(counter, 16), ToHex(expected.counter, 16)) << where;
          ASSERT_EQ(ToHex(x, 16), ToHex(expected.x, 16)) << where;
        }
      }
    }
  }
}

// Buffers that end at an inaccessible page: any read or write past
// in[0..16*blocks) or out[0..16*blocks) faults.
TEST_P(Armv8CeKernelTest, StaysInsideBuffers) {
  std::mt19937 rng(4);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const KeySchedule schedule = Expand(key);
    for (size_t blocks : {1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 45}) {
      const size_t size = 16 * blocks;
      GuardedBuffer in(size), out(size), opened(size);
      const Bytes plaintext = RandomBytes(rng, size);
      std::memcpy(in.data(), plaintext.data(), size);
      uint8_t counter[16] = {}, x[16] = {};
      kernel().seal_blocks(schedule, counter, x, in.data(), out.data(), blocks);
      std::memset(counter, 0, 16);
      std::memset(x, 0, 16);
      kernel().open_blocks(schedule, counter, x, out.data(), opened.data(), blocks);
      ASSERT_EQ(ToHex(opened.data(), size), ToHex(plaintext));
      kernel().ghash(schedule, x, out.data(), blocks);
    }
  }
}

TEST_P(Armv8CeKernelTest, SealAndOpenWholeRangeAtOnce) {
  // Long enough that the main loop runs several iterations with the counter
  // wrapping in the middle of one.
  std::mt19937 rng(5);
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(rng, key_bytes);
    const KeySchedule schedule = Expand(key);
    const ReferenceAes aes(key);
    uint8_t h[16] = {};
    aes.Encrypt(h, h);
    const size_t blocks = 1000;
    const Bytes plaintext = RandomBytes(rng, 16 * blocks);
    Bytes counter_start = RandomBytes(rng, 16);
    counter_start[12] = counter_start[13] = counter_start[14] = 0xff;
    counter_start[15] = 0x00;  // wraps after 256 blocks
    const Bytes x_start = RandomBytes(rng, 16);
    const ReferenceCrypt expected =
        ReferenceSeal(aes, h, counter_start, x_start, plaintext);
    Bytes buffer = plaintext;
    uint8_t counter[16], x[16];
    std::memcpy(counter, counter_start.data(), 16);
    std::memcpy(x, x_start.data(), 16);
    kernel().seal_blocks(schedule, counter, x, buffer.data(), buffer.data(), blocks);
    ASSERT_EQ(ToHex(buffer), ToHex(expected.out));
    ASSERT_EQ(ToHex(counter, 16), ToHex(expected.counter, 16));
    ASSERT_EQ(ToHex(x, 16), ToHex(expected.x, 16));
    std::memcpy(counter, counter_start.data(), 16);
    std::memcpy(x, x_start.data(), 16);
    kernel().open_blocks(schedule, counter, x, buffer.data(), buffer.data(), blocks);
    ASSERT_EQ(ToHex(buffer), ToHex(plaintext));
    ASSERT_EQ(ToHex(x, 16), ToHex(expected.x, 16));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, Armv8CeKernelTest,
    testing::Values(KernelCase{&kArmv8CeKernel, "armv8_ce", kHwcapAes | kHwcapPmull},
                    KernelCase{&kArmv8CeEor3Kernel, "armv8_ce_eor3",
                               kHwcapAes | kHwcapPmull | kHwcapSha3}),
    [](const testing::TestParamInfo<KernelCase>& info) {
      return std::string(info.param.kernel == &kArmv8CeKernel ? "Plain" : "Eor3");
    });

// ---------------------------------------------------------------------------
// AAPCS64: every entry point keeps x19-x29, d8-d15 and sp.
// ---------------------------------------------------------------------------

// The assembly entry points directly (the kernels' C++ wrappers are checked by
// //crypto/tests:abi_test), through the shared trampoline in crypto/testing.
TEST(Armv8CeAbiTest, EntryPointsKeepCalleeSavedRegisters) {
  if (!CpuHas(kHwcapAes | kHwcapPmull)) GTEST_SKIP() << "no AES/PMULL";
  const bool sha3 = CpuHas(kHwcapSha3);
  using test::AbiCheckedCall;
  for (size_t key_bytes : {16, 24, 32}) {
    uint8_t key[32] = {1, 2, 3};
    KeySchedule schedule;
    uint8_t* keys = schedule.bytes;
    uint8_t counter[16] = {}, x[16] = {};
    Bytes in(16 * 37, 7), out(16 * 37);
    EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_expand_key, key, key_bytes, keys), "")
        << "expand_key " << key_bytes;
    EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_encrypt_block, keys, in.data(),
                             out.data()),
              "");
    for (size_t blocks : {0, 1, 5, 16, 37}) {
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_ghash, keys, x, in.data(), blocks), "")
          << "ghash " << blocks;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_seal_blocks, keys, counter, x, in.data(),
                               out.data(), blocks),
                "")
          << "seal " << blocks;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_open_blocks, keys, counter, x, in.data(),
                               out.data(), blocks),
                "")
          << "open " << blocks;
      if (!sha3) continue;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_ghash_eor3, keys, x, in.data(), blocks),
                "")
          << "ghash_eor3 " << blocks;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_seal_blocks_eor3, keys, counter, x,
                               in.data(), out.data(), blocks),
                "")
          << "seal_eor3 " << blocks;
      EXPECT_EQ(AbiCheckedCall(sealbox_armv8_ce_open_blocks_eor3, keys, counter, x,
                               in.data(), out.data(), blocks),
                "")
          << "open_eor3 " << blocks;
    }
  }
}

}  // namespace
}  // namespace sealbox::crypto::kernel
