#include "crypto/testing/kernel_reference.h"

#include <cstring>
#include <map>
#include <memory>

namespace sealbox::crypto::test {
namespace {

uint8_t GfMul(uint8_t a, uint8_t b) {
  uint8_t r = 0;
  for (; b != 0; b >>= 1) {
    if (b & 1) r ^= a;
    a = static_cast<uint8_t>((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
  }
  return r;
}

const uint8_t* Sbox() {
  static const auto* table = [] {
    auto* t = new uint8_t[256];
    for (int x = 0; x < 256; ++x) t[x] = ReferenceSbox(static_cast<uint8_t>(x));
    return t;
  }();
  return table;
}

void ReferenceMultiply(uint8_t x[16], const uint8_t h[16]) {
  uint8_t z[16] = {};
  uint8_t v[16];
  std::memcpy(v, h, 16);
  for (int i = 0; i < 128; ++i) {
    if ((x[i / 8] >> (7 - i % 8)) & 1) {
      for (int j = 0; j < 16; ++j) z[j] ^= v[j];
    }
    const bool lsb = v[15] & 1;
    for (int j = 15; j > 0; --j) v[j] = static_cast<uint8_t>((v[j] >> 1) | (v[j - 1] << 7));
    v[0] >>= 1;
    if (lsb) v[0] ^= 0xe1;
  }
  std::memcpy(x, z, 16);
}

void GhashPadded(const kernel::Kernel& kernel, const kernel::KeySchedule& schedule, uint8_t x[16],
                 const uint8_t* data, size_t size) {
  const size_t whole = size / 16;
  kernel.ghash(schedule, x, data, whole);
  if (size % 16 != 0) {
    uint8_t block[16] = {};
    std::memcpy(block, data + 16 * whole, size % 16);
    kernel.ghash(schedule, x, block, 1);
  }
}

}  // namespace

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

const AesVector kFips197AppendixC[3] = {
    {"000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
     "69c4e0d86a7b0430d8cdb78070b4c55a"},
    {"000102030405060708090a0b0c0d0e0f1011121314151617", "00112233445566778899aabbccddeeff",
     "dda97ca4864cdfe06eaf70a0ec0d7191"},
    {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
     "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"},
};

const GcmVector& McGrewViegaCase(int number) {
  static const auto* cases = [] {
    const std::string k = "feffe9928665731c6d6a8f9467308308";
    const std::string iv = "cafebabefacedbaddecaf888";
    const std::string aad = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
    const std::string p =
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
        "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
    const std::string p60 = p.substr(0, 120);
    const std::string zero16(32, '0'), zero24(48, '0'), zero32(64, '0'), iv0(24, '0');
    const std::string c128 =
        "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
        "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985";
    const std::string c256 =
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
        "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad";
    return new std::map<int, GcmVector>{
        {1, {zero16, iv0, "", "", "", "58e2fccefa7e3061367f1d57a4e7455a"}},
        {2,
         {zero16, iv0, "", zero16, "0388dace60b6a392f328c2b971b2fe78",
          "ab6e47d42cec13bdf53a67b21257bddf"}},
        {3, {k, iv, "", p, c128, "4d5c2af327cd64a62cf35abd2ba6fab4"}},
        {4, {k, iv, aad, p60, c128.substr(0, 120), "5bc94fbc3221a5db94fae95ae7121a47"}},
        {7, {zero24, iv0, "", "", "", "cd33b28ac773f74ba00ed1f312572435"}},
        {8,
         {zero24, iv0, "", zero16, "98e7247c07f0fe411c267e4384b0f600",
          "2ff58d80033927ab8ef4d4587514f0fb"}},
        {10,
         {k + k.substr(0, 16), iv, aad, p60,
          "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
          "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710",
          "2519498e80f1478f37ba55bd6d27618c"}},
        {13, {zero32, iv0, "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"}},
        {14,
         {zero32, iv0, "", zero16, "cea7403d4d606b6e074ec5d3baf39d18",
          "d0d1c8a799996bf0265b98b5d48ab919"}},
        {15, {k + k, iv, "", p, c256, "b094dac5d93471bdec1a502270e3cc6c"}},
        {16, {k + k, iv, aad, p60, c256.substr(0, 120), "76fc6ece0f4e1768cddf8853bb2d551b"}},
    };
  }();
  return cases->at(number);
}

Bytes KernelGcmSeal(const kernel::Kernel& kernel, const Bytes& key, const Bytes& iv,
                    const Bytes& aad, const Bytes& plaintext) {
  // KeySchedule is 4 KiB: kept on the heap.
  const auto schedule = std::make_unique<kernel::KeySchedule>();
  kernel.expand_key(key.data(), key.size(), schedule.get());
  uint8_t j0[16] = {};
  std::memcpy(j0, iv.data(), 12);
  j0[15] = 1;
  uint8_t counter[16];
  std::memcpy(counter, j0, 16);
  Increment32(counter);
  uint8_t x[16] = {};
  GhashPadded(kernel, *schedule, x, aad.data(), aad.size());
  Bytes out(plaintext.size());
  const size_t whole = plaintext.size() / 16;
  kernel.seal_blocks(*schedule, counter, x, plaintext.data(), out.data(), whole);
  const size_t rest = plaintext.size() % 16;
  if (rest != 0) {
    uint8_t keystream[16];
    kernel.encrypt_block(*schedule, counter, keystream);
    for (size_t i = 0; i < rest; ++i) {
      out[16 * whole + i] = plaintext[16 * whole + i] ^ keystream[i];
    }
  }
  GhashPadded(kernel, *schedule, x, out.data() + 16 * whole, rest);
  uint8_t lengths[16] = {};
  const uint64_t bits[2] = {aad.size() * 8, plaintext.size() * 8};
  for (int i = 0; i < 16; ++i) lengths[i] = static_cast<uint8_t>(bits[i / 8] >> (56 - 8 * (i % 8)));
  kernel.ghash(*schedule, x, lengths, 1);
  uint8_t mask[16];
  kernel.encrypt_block(*schedule, j0, mask);
  for (int i = 0; i < 16; ++i) out.push_back(x[i] ^ mask[i]);
  return out;
}

BlockCipher KernelBlockCipher(const kernel::Kernel& kernel, const kernel::KeySchedule& schedule) {
  return [&kernel, &schedule](const uint8_t in[16], uint8_t out[16]) {
    kernel.encrypt_block(schedule, in, out);
  };
}

uint8_t ReferenceSbox(uint8_t x) {
  uint8_t inverse = 0;
  for (int y = 1; y < 256 && x != 0; ++y) {
    if (GfMul(x, static_cast<uint8_t>(y)) == 1) inverse = static_cast<uint8_t>(y);
  }
  uint8_t s = 0x63;
  for (int i = 0; i < 5; ++i) {
    s ^= static_cast<uint8_t>((inverse << i) | (inverse >> ((8 - i) & 7)));
  }
  return s;
}

ReferenceAes::ReferenceAes(const Bytes& key) {
  const uint8_t* sbox = Sbox();
  const size_t nk = key.size() / 4;
  rounds_ = static_cast<int>(nk) + 6;
  w_.assign(key.begin(), key.end());
  uint8_t rcon = 1;
  for (size_t i = nk; i < 4 * static_cast<size_t>(rounds_ + 1); ++i) {
    uint8_t t[4] = {w_[4 * i - 4], w_[4 * i - 3], w_[4 * i - 2], w_[4 * i - 1]};
    if (i % nk == 0) {
      const uint8_t first = t[0];
      t[0] = sbox[t[1]] ^ rcon;
      t[1] = sbox[t[2]];
      t[2] = sbox[t[3]];
      t[3] = sbox[first];
      rcon = GfMul(rcon, 2);
    } else if (nk > 6 && i % nk == 4) {
      for (uint8_t& b : t) b = sbox[b];
    }
    for (int j = 0; j < 4; ++j) w_.push_back(w_[4 * (i - nk) + j] ^ t[j]);
  }
}

void ReferenceAes::Encrypt(const uint8_t in[16], uint8_t out[16]) const {
  const uint8_t* sbox = Sbox();
  uint8_t s[16];
  std::memcpy(s, in, 16);
  for (int i = 0; i < 16; ++i) s[i] ^= w_[i];
  for (int r = 1; r <= rounds_; ++r) {
    uint8_t shifted[16];  // SubBytes and ShiftRows
    for (int c = 0; c < 4; ++c) {
      for (int row = 0; row < 4; ++row) {
        shifted[4 * c + row] = sbox[s[4 * ((c + row) % 4) + row]];
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
    for (int i = 0; i < 16; ++i) s[i] ^= w_[16 * r + i];
  }
  std::memcpy(out, s, 16);
}

Bytes ReferenceAes::Encrypt(const Bytes& in) const {
  Bytes out(16);
  Encrypt(in.data(), out.data());
  return out;
}

BlockCipher ReferenceAes::AsBlockCipher() const {
  return [this](const uint8_t in[16], uint8_t out[16]) { Encrypt(in, out); };
}

void ReferenceGhash(const uint8_t h[16], uint8_t x[16], const uint8_t* in, size_t blocks) {
  for (size_t b = 0; b < blocks; ++b) {
    for (int j = 0; j < 16; ++j) x[j] ^= in[16 * b + j];
    ReferenceMultiply(x, h);
  }
}

void Increment32(uint8_t counter[16]) {
  for (int i = 15; i >= 12; --i) {
    if (++counter[i] != 0) break;
  }
}

void ReferenceSeal(const BlockCipher& encrypt, const uint8_t h[16], uint8_t counter[16],
                   uint8_t x[16], const uint8_t* in, uint8_t* out, size_t blocks) {
  for (size_t b = 0; b < blocks; ++b) {
    uint8_t keystream[16];
    encrypt(counter, keystream);
    Increment32(counter);
    for (int i = 0; i < 16; ++i) out[16 * b + i] = in[16 * b + i] ^ keystream[i];
  }
  ReferenceGhash(h, x, out, blocks);
}

}  // namespace sealbox::crypto::test
