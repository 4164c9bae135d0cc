// Differential test against OpenSSL's EVP AES-GCM, on every implementation this CPU
// supports: each case is sealed by both and must give the same ciphertext and tag,
// and each side must open the other's output. Cases cover every plaintext length up
// to 1 KiB, long messages, lengths around each multiple of the kernels' unroll
// widths up to 16 KiB, AAD and IV lengths, key and tag sizes, in-place and unaligned
// buffers, random mixes of all of these, and the 32-bit counter wrapping from
// 0xffffffff to 0.
//
// Inputs come from std::mt19937_64 with a fixed seed (SEALBOX_TEST_SEED overrides
// it); every failure prints the seed and the case, so it reproduces.
#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "crypto/aes_gcm.h"
#include "crypto/byte_order/byte_order.h"
#include "crypto/testing/implementations.h"
#include "crypto/testing/test_bytes.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

using Bytes = std::vector<uint8_t>;
using test::Hex;
using test::RandomBytes;

constexpr size_t kTagSizes[] = {4, 8, 12, 13, 14, 15, 16};

uint64_t Seed() {
  static const uint64_t seed = [] {
    const char* env = std::getenv("SEALBOX_TEST_SEED");
    return env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 0) : uint64_t{0x5ea1b0c5};
  }();
  return seed;
}

// EXPECT_TRUE(SameBytes(actual, expected)): compares the bytes, and only when they
// differ hex-encodes the 64 from the first difference on (EXPECT_EQ on Hex() of
// both encodes every byte of every case, and prints megabytes when they differ).
::testing::AssertionResult SameBytes(const Bytes& actual, const Bytes& expected) {
  if (actual == expected) return ::testing::AssertionSuccess();
  size_t first = 0;
  while (first < actual.size() && first < expected.size() && actual[first] == expected[first]) {
    ++first;
  }
  const auto from_first = [first](const Bytes& bytes) {
    return Hex(absl::MakeConstSpan(bytes).subspan(std::min(first, bytes.size()), 64));
  };
  return ::testing::AssertionFailure()
         << "first difference at byte " << first << " (sizes " << actual.size() << " and "
         << expected.size() << ")\n  actual: ..." << from_first(actual) << "\nexpected: ..."
         << from_first(expected);
}

// --- OpenSSL, the reference ------------------------------------------------------

std::string OpenSslErrors() {
  std::string errors;
  while (unsigned long e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof(text));
    absl::StrAppend(&errors, errors.empty() ? "" : "; ", text);
  }
  return errors;
}

#define OPENSSL_OK(call)                                                 \
  do {                                                                   \
    if ((call) != 1) {                                                   \
      ADD_FAILURE() << "OpenSSL: " #call " failed: " << OpenSslErrors(); \
      return false;                                                      \
    }                                                                    \
  } while (0)

struct CipherCtxDeleter {
  void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxDeleter>;

const EVP_CIPHER* GcmCipher(size_t key_bytes) {
  return key_bytes == 16   ? EVP_aes_128_gcm()
         : key_bytes == 24 ? EVP_aes_192_gcm()
                           : EVP_aes_256_gcm();
}

bool OpenSslSeal(const Bytes& key, const Bytes& iv, const Bytes& aad, const Bytes& pt,
                 size_t tag_size, Bytes* ct, Bytes* tag) {
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  OPENSSL_OK(EVP_EncryptInit_ex(ctx.get(), GcmCipher(key.size()), nullptr, nullptr, nullptr));
  OPENSSL_OK(
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr));
  OPENSSL_OK(EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, key.data(), iv.data()));
  int len = 0;
  if (!aad.empty()) {
    OPENSSL_OK(
        EVP_EncryptUpdate(ctx.get(), nullptr, &len, aad.data(), static_cast<int>(aad.size())));
  }
  ct->assign(pt.size() + 16, 0);
  int written = 0;
  if (!pt.empty()) {
    OPENSSL_OK(
        EVP_EncryptUpdate(ctx.get(), ct->data(), &written, pt.data(), static_cast<int>(pt.size())));
  }
  OPENSSL_OK(EVP_EncryptFinal_ex(ctx.get(), ct->data() + written, &len));
  ct->resize(written + len);
  tag->assign(tag_size, 0);
  OPENSSL_OK(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_size),
                                 tag->data()));
  return true;
}

// True when OpenSSL accepts the tag; `pt` then holds the plaintext.
bool OpenSslOpen(const Bytes& key, const Bytes& iv, const Bytes& aad, const Bytes& ct,
                 const Bytes& tag, Bytes* pt) {
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  OPENSSL_OK(EVP_DecryptInit_ex(ctx.get(), GcmCipher(key.size()), nullptr, nullptr, nullptr));
  OPENSSL_OK(
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr));
  OPENSSL_OK(EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, key.data(), iv.data()));
  int len = 0;
  if (!aad.empty()) {
    OPENSSL_OK(
        EVP_DecryptUpdate(ctx.get(), nullptr, &len, aad.data(), static_cast<int>(aad.size())));
  }
  pt->assign(ct.size() + 16, 0);
  int written = 0;
  if (!ct.empty()) {
    OPENSSL_OK(
        EVP_DecryptUpdate(ctx.get(), pt->data(), &written, ct.data(), static_cast<int>(ct.size())));
  }
  Bytes tag_copy = tag;  // SET_TAG takes a non-const pointer
  OPENSSL_OK(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag.size()),
                                 tag_copy.data()));
  if (EVP_DecryptFinal_ex(ctx.get(), pt->data() + written, &len) != 1) {
    ERR_clear_error();
    return false;
  }
  pt->resize(written + len);
  return true;
}

// AES_K(block), for the GHASH key H = AES_K(0^128).
bool OpenSslEncryptBlock(const Bytes& key, const uint8_t in[16], uint8_t out[16]) {
  const EVP_CIPHER* ecb = key.size() == 16   ? EVP_aes_128_ecb()
                          : key.size() == 24 ? EVP_aes_192_ecb()
                                             : EVP_aes_256_ecb();
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  OPENSSL_OK(EVP_EncryptInit_ex(ctx.get(), ecb, nullptr, key.data(), nullptr));
  OPENSSL_OK(EVP_CIPHER_CTX_set_padding(ctx.get(), 0));
  int len = 0;
  OPENSSL_OK(EVP_EncryptUpdate(ctx.get(), out, &len, in, 16));
  return len == 16;
}

// --- GF(2^128) as GCM defines it, bit by bit (SP 800-38D, Algorithm 1) ----------

// Bit 0 of the field element is the most significant bit of byte 0.
struct Gf128 {
  uint64_t hi = 0;  // bytes 0..7, big-endian
  uint64_t lo = 0;  // bytes 8..15

  static Gf128 One() { return {uint64_t{1} << 63, 0}; }

  static Gf128 Load(const uint8_t bytes[16]) {
    return {LoadBigEndian64(bytes), LoadBigEndian64(bytes + 8)};
  }

  void Store(uint8_t bytes[16]) const {
    StoreBigEndian64(hi, bytes);
    StoreBigEndian64(lo, bytes + 8);
  }

  Gf128 operator^(const Gf128& other) const { return {hi ^ other.hi, lo ^ other.lo}; }
  bool operator==(const Gf128& other) const { return hi == other.hi && lo == other.lo; }

  Gf128 operator*(const Gf128& y) const {
    Gf128 z, v = y;
    for (int i = 0; i < 128; ++i) {
      const uint64_t word = i < 64 ? hi : lo;
      if ((word >> (63 - i % 64)) & 1) z = z ^ v;
      const bool carry = v.lo & 1;
      v.lo = v.lo >> 1 | v.hi << 63;
      v.hi >>= 1;
      if (carry) v.hi ^= uint64_t{0xe1} << 56;
    }
    return z;
  }

  // x^(2^128 - 2) = x^-1 for x != 0: square and multiply over 127 ones and a zero.
  Gf128 Inverse() const {
    Gf128 result = One();
    for (int bit = 127; bit >= 0; --bit) {
      result = result * result;
      if (bit != 0) result = result * *this;
    }
    return result;
  }
};

// The lengths block that ends the IV's GHASH: 0^64 || [8 * iv_bytes]_64.
Gf128 IvLengthsBlock(size_t iv_bytes) { return {0, uint64_t{iv_bytes} * 8}; }

// An IV of `iv_bytes` (a multiple of 16) whose pre-counter block J0 = GHASH_H(IV ||
// lengths) is `j0`: random blocks, then the last one solved for. With X the GHASH
// state before the last block B and L the lengths block, J0 = ((X ^ B)·H ^ L)·H, so
// B = ((J0·H^-1) ^ L)·H^-1 ^ X.
Bytes IvForJ0(const Gf128& h, const Gf128& j0, size_t iv_bytes, std::mt19937_64& rng) {
  Bytes iv = RandomBytes(rng, iv_bytes);
  Gf128 x;
  for (size_t i = 0; i + 16 < iv_bytes; i += 16) x = (x ^ Gf128::Load(&iv[i])) * h;
  const Gf128 h_inverse = h.Inverse();
  const Gf128 last = (((j0 * h_inverse) ^ IvLengthsBlock(iv_bytes)) * h_inverse) ^ x;
  last.Store(&iv[iv_bytes - 16]);
  return iv;
}

Gf128 J0ForIv(const Gf128& h, const Bytes& iv) {
  Gf128 x;
  for (size_t i = 0; i < iv.size(); i += 16) {
    uint8_t block[16] = {};
    for (size_t j = i; j < iv.size() && j < i + 16; ++j) block[j - i] = iv[j];
    x = (x ^ Gf128::Load(block)) * h;
  }
  return (x ^ IvLengthsBlock(iv.size())) * h;
}

// --- One case, both ways ------------------------------------------------------------

struct Case {
  size_t key_bytes = 16;
  size_t iv_bytes = 12;
  size_t aad_bytes = 0;
  size_t text_bytes = 0;
  size_t tag_bytes = 16;
  bool in_place = false;
  size_t in_offset = 0;   // where the input starts in its buffer
  size_t out_offset = 0;  // where the output starts in its own (out of place)
};

std::string Describe(const Case& c) {
  return absl::StrCat("seed=", Seed(), " key=", c.key_bytes, " iv=", c.iv_bytes,
                      " aad=", c.aad_bytes, " text=", c.text_bytes, " tag=", c.tag_bytes,
                      c.in_place ? " in-place" : " out-of-place", " in_offset=", c.in_offset,
                      " out_offset=", c.out_offset);
}

class OpenSslDifferentialTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { rng_.seed(Seed() ^ std::hash<std::string>()(Name())); }

  static std::string Name() {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  // Runs `c` with random contents; `key` and `iv` replace the random ones when not
  // empty. Returns false once a check failed, so loops can stop at the first bad case.
  bool Check(const Case& c, Bytes key = {}, Bytes iv = {}) {
    SCOPED_TRACE(Describe(c));
    if (key.empty()) key = RandomBytes(rng_, c.key_bytes);
    if (iv.empty()) iv = RandomBytes(rng_, c.iv_bytes);
    const Bytes aad = RandomBytes(rng_, c.aad_bytes);
    const Bytes pt = RandomBytes(rng_, c.text_bytes);

    Bytes want_ct, want_tag;
    if (!OpenSslSeal(key, iv, aad, pt, c.tag_bytes, &want_ct, &want_tag)) return false;

    absl::StatusOr<std::unique_ptr<ExpandedKey>> ours =
        ExpandedKey::CreateWithTagBytes(key, c.tag_bytes, GetParam());
    EXPECT_TRUE(ours.ok()) << ours.status();
    if (!ours.ok()) return false;

    Bytes ct, tag(c.tag_bytes, 0xAA);
    Run(c, pt, &ct, [&](absl::Span<const uint8_t> in, absl::Span<uint8_t> out) {
      return (*ours)->Seal(iv, aad, in, out, absl::MakeSpan(tag));
    });
    EXPECT_TRUE(SameBytes(ct, want_ct)) << "ciphertext differs from OpenSSL's";
    EXPECT_TRUE(SameBytes(tag, want_tag)) << "tag differs from OpenSSL's";

    // Ours opens OpenSSL's message, and OpenSSL opens ours.
    Bytes opened;
    Run(c, want_ct, &opened, [&](absl::Span<const uint8_t> in, absl::Span<uint8_t> out) {
      return (*ours)->Open(iv, aad, in, want_tag, out);
    });
    EXPECT_TRUE(SameBytes(opened, pt)) << "opening OpenSSL's ciphertext";
    Bytes openssl_opened;
    EXPECT_TRUE(OpenSslOpen(key, iv, aad, ct, tag, &openssl_opened)) << "OpenSSL rejects our tag";
    EXPECT_TRUE(SameBytes(openssl_opened, pt)) << "OpenSSL opening our ciphertext";
    return !HasFailure();
  }

 private:
  // Places `input` at the case's offset, runs `op` in place or into a second buffer
  // at its offset, checks that nothing outside the output (and, out of place, nothing
  // of the input) was written, and returns the output in `result`.
  template <typename Op>
  void Run(const Case& c, const Bytes& input, Bytes* result, Op op) {
    constexpr size_t kGuard = 32;
    constexpr uint8_t kIn = 0x3c, kOut = 0xc3;
    Bytes in_buffer(c.in_offset + input.size() + kGuard, kIn);
    std::copy(input.begin(), input.end(), in_buffer.begin() + c.in_offset);
    const Bytes in_before = in_buffer;
    Bytes out_buffer(c.out_offset + input.size() + kGuard, kOut);
    Bytes& target = c.in_place ? in_buffer : out_buffer;
    const size_t offset = c.in_place ? c.in_offset : c.out_offset;
    const absl::Span<const uint8_t> in(in_buffer.data() + c.in_offset, input.size());
    const absl::Span<uint8_t> out(target.data() + offset, input.size());

    const absl::Status status = op(in, out);
    EXPECT_TRUE(status.ok()) << status;
    result->assign(out.begin(), out.end());

    const uint8_t fill = c.in_place ? kIn : kOut;
    for (size_t i = 0; i < target.size(); ++i) {
      if (i >= offset && i < offset + input.size()) continue;
      if (target[i] != fill) {
        ADD_FAILURE() << "wrote outside the output, at offset "
                      << static_cast<ptrdiff_t>(i) - static_cast<ptrdiff_t>(offset);
        break;
      }
    }
    if (!c.in_place) {
      EXPECT_TRUE(in_buffer == in_before) << "changed its input";
    }
  }

 protected:
  std::mt19937_64 rng_;
};

INSTANTIATE_TEST_SUITE_P(Impl, OpenSslDifferentialTest,
                         ::testing::ValuesIn(test::ImplementationsUnderTest()),
                         test::ImplementationTestName);

TEST_P(OpenSslDifferentialTest, EveryLengthUpTo1KiB) {
  // Coprime cycles over key size (3), tag size (7), IV size (5), AAD size (17) and
  // in-place (2), so every combination of the first four appears.
  constexpr size_t kIvSizes[] = {12, 1, 8, 16, 60};
  for (size_t n = 0; n <= 1024; ++n) {
    Case c;
    c.text_bytes = n;
    c.key_bytes = test::kAesKeySizes[n % 3];
    c.tag_bytes = kTagSizes[n % 7];
    c.iv_bytes = kIvSizes[n % 5];
    c.aad_bytes = (n % 17) * 5;
    c.in_place = n % 2 == 1;
    c.in_offset = rng_() % 16;
    c.out_offset = rng_() % 16;
    if (!Check(c)) return;
  }
}

TEST_P(OpenSslDifferentialTest, LongMessages) {
  std::vector<size_t> sizes = {(size_t{1} << 20) - 1, size_t{1} << 20};
  for (int i = 0; i < 4; ++i) sizes.push_back(rng_() % ((size_t{1} << 20) + 1));
  for (size_t i = 0; i < sizes.size(); ++i) {
    Case c;
    c.text_bytes = sizes[i];
    c.key_bytes = test::kAesKeySizes[i % 3];
    c.iv_bytes = i % 2 == 0 ? 12 : 1 + rng_() % 64;
    c.aad_bytes = rng_() % 64;
    c.in_place = i % 2 == 1;
    c.in_offset = rng_() % 16;
    c.out_offset = rng_() % 16;
    if (!Check(c)) return;
  }
  // Around every multiple of the wide kernels' unroll widths, 8 blocks (128 bytes)
  // up to 2 KiB and 16 blocks (256 bytes) up to 16 KiB: where a main loop hands
  // over to a narrower one or to the tail, with a block or a byte more or less.
  // In-place alternates with each length and each multiple, so every offset from a
  // multiple gets both; the key size cycles over 3, coprime to the 8 offsets.
  constexpr int kAroundMultiple[] = {-17, -16, -1, 0, 1, 15, 16, 17};
  size_t i = 0, multiples = 0;
  for (size_t multiple = 128; multiple <= 16384; multiple += 128) {
    if (multiple > 2048 && multiple % 256 != 0) continue;
    for (int delta : kAroundMultiple) {
      Case c;
      c.text_bytes = multiple + delta;
      c.key_bytes = test::kAesKeySizes[i % 3];
      c.iv_bytes = i % 5 == 0 ? 1 + rng_() % 64 : 12;
      c.aad_bytes = rng_() % 64;
      c.in_place = (i + multiples) % 2 == 1;
      c.in_offset = rng_() % 16;
      c.out_offset = rng_() % 16;
      if (!Check(c)) return;
      ++i;
    }
    ++multiples;
  }
}

TEST_P(OpenSslDifferentialTest, AadLengths) {
  for (size_t aad = 0; aad <= 80; ++aad) {
    Case c;
    c.aad_bytes = aad;
    c.text_bytes = rng_() % 50;
    c.key_bytes = test::kAesKeySizes[aad % 3];
    c.iv_bytes = aad % 2 == 0 ? 12 : 20;
    if (!Check(c)) return;
  }
  for (int i = 0; i < 6; ++i) {
    Case c;
    c.aad_bytes = rng_() % 70000;
    c.text_bytes = rng_() % 300;
    c.key_bytes = test::kAesKeySizes[i % 3];
    if (!Check(c)) return;
  }
}

TEST_P(OpenSslDifferentialTest, IvLengths) {
  for (size_t iv = 1; iv <= 64; ++iv) {
    Case c;
    c.iv_bytes = iv;
    c.text_bytes = rng_() % 100;
    c.aad_bytes = rng_() % 40;
    c.key_bytes = test::kAesKeySizes[iv % 3];
    c.in_place = iv % 2 == 0;
    if (!Check(c)) return;
  }
}

TEST_P(OpenSslDifferentialTest, KeyAndTagSizes) {
  for (size_t key : test::kAesKeySizes) {
    for (size_t tag : kTagSizes) {
      for (size_t text : {0, 1, 15, 16, 17, 255, 256, 257}) {
        for (bool in_place : {false, true}) {
          Case c;
          c.key_bytes = key;
          c.tag_bytes = tag;
          c.text_bytes = text;
          c.aad_bytes = text % 23;
          c.in_place = in_place;
          if (!Check(c)) return;
        }
      }
    }
  }
}

TEST_P(OpenSslDifferentialTest, BufferOffsets) {
  for (size_t text : {7, 149, 515}) {
    for (size_t in_offset = 0; in_offset < 16; ++in_offset) {
      Case c;
      c.text_bytes = text;
      c.key_bytes = test::kAesKeySizes[(text + in_offset) % 3];
      c.in_offset = in_offset;
      c.in_place = true;
      if (!Check(c)) return;
      c.in_place = false;
      for (size_t out_offset = 0; out_offset < 16; ++out_offset) {
        c.out_offset = out_offset;
        if (!Check(c)) return;
      }
    }
  }
}

TEST_P(OpenSslDifferentialTest, RandomCases) {
  // Everything at once, drawn at random: catches interactions the sweeps above miss.
  for (int i = 0; i < 1500; ++i) {
    Case c;
    c.key_bytes = test::kAesKeySizes[rng_() % 3];
    c.iv_bytes = rng_() % 2 == 0 ? 12 : 1 + rng_() % 80;
    c.aad_bytes = rng_() % 4 == 0 ? 0 : rng_() % 300;
    c.text_bytes = rng_() % 4 == 0 ? rng_() % 32 : rng_() % 4096;
    c.tag_bytes = kTagSizes[rng_() % 7];
    c.in_place = rng_() % 2 == 0;
    c.in_offset = rng_() % 16;
    c.out_offset = rng_() % 16;
    if (!Check(c)) return;
  }
}

TEST_P(OpenSslDifferentialTest, GfArithmeticSelfCheck) {
  // The helpers below are only as good as the field arithmetic.
  for (int i = 0; i < 20; ++i) {
    const Gf128 x{rng_(), rng_()};
    EXPECT_EQ(x * x.Inverse(), Gf128::One());
    EXPECT_EQ(x * Gf128::One(), x);
  }
  // Spec test case 2's key: H = 66e94bd4ef8a2c3b884cfa59ca342b2e, and for a 16-byte
  // zero IV, J0 = GHASH_H(0^128 || lengths) = ((0·H) ^ L)·H = L·H.
  const Bytes key(16, 0);
  uint8_t zero[16] = {}, h_bytes[16];
  ASSERT_TRUE(OpenSslEncryptBlock(key, zero, h_bytes));
  EXPECT_EQ(Hex(absl::MakeConstSpan(h_bytes, 16)), "66e94bd4ef8a2c3b884cfa59ca342b2e");
  const Gf128 h = Gf128::Load(h_bytes);
  EXPECT_EQ(J0ForIv(h, Bytes(16, 0)), IvLengthsBlock(16) * h);
}

TEST_P(OpenSslDifferentialTest, CounterWrap) {
  // GCM increments only the low 32 bits of the counter, modulo 2^32. A 12-byte IV
  // starts it at 2, so only other IV lengths can reach the wrap: solve for IVs whose
  // J0 ends in 0xffffffff - k, so that the k-th block's counter (0-based) wraps to
  // 0. k runs over 0..31 to put the wrap at every position of a multi-block batch.
  for (size_t key_bytes : test::kAesKeySizes) {
    for (size_t iv_bytes : {16, 32, 64}) {
      for (uint32_t k = 0; k < 32; ++k) {
        Case c;
        c.key_bytes = key_bytes;
        c.iv_bytes = iv_bytes;
        c.text_bytes = 16 * 40 + k % 16;
        c.aad_bytes = k % 5 * 7;
        c.tag_bytes = 16;
        c.in_place = k % 2 == 1;
        c.in_offset = k % 3;
        c.out_offset = k % 7;
        SCOPED_TRACE(absl::StrCat("J0 low 32 bits = 0xffffffff - ", k));

        const Bytes key = RandomBytes(rng_, key_bytes);
        uint8_t zero[16] = {}, h_bytes[16];
        ASSERT_TRUE(OpenSslEncryptBlock(key, zero, h_bytes));
        const Gf128 h = Gf128::Load(h_bytes);
        const Gf128 j0{rng_(), (rng_() & ~uint64_t{0xffffffff}) | (0xffffffffu - k)};
        const Bytes iv = IvForJ0(h, j0, iv_bytes, rng_);
        ASSERT_EQ(J0ForIv(h, iv), j0);
        if (!Check(c, key, iv)) return;
      }
    }
  }
}

}  // namespace
}  // namespace sealbox::crypto
