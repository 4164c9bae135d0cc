// Functional tests of the AES-GCM API, run on every implementation this CPU
// supports: the specification's known answers, argument checks, and rejection of
// every single-bit change to an authenticated message.
#include "crypto/aes_gcm.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "crypto/testing/implementations.h"
#include "crypto/testing/test_bytes.h"
#include "crypto/testing/vector_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;
using test::Hex;
using test::RandomBytes;

constexpr char kSpecVectors[] = "crypto/tests/testdata/gcm_spec_vectors.txt";
constexpr size_t kValidTagSizes[] = {4, 8, 12, 13, 14, 15, 16};

bool AllZero(absl::Span<const uint8_t> bytes) {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

class AesGcmTest : public ::testing::TestWithParam<std::string> {
 protected:
  // A key on the implementation under test; null (with a test failure) on error.
  std::unique_ptr<ExpandedKey> NewKey(absl::Span<const uint8_t> key,
                                      size_t tag_bytes = kMaxTagBytes) {
    absl::StatusOr<std::unique_ptr<ExpandedKey>> expanded =
        ExpandedKey::CreateWithTagBytes(key, tag_bytes, GetParam());
    EXPECT_TRUE(expanded.ok()) << expanded.status();
    return expanded.ok() ? std::move(*expanded) : nullptr;
  }

  // Opens (iv, aad, ciphertext, tag) out of place and in place, expecting the
  // uniform decryption failure and a wiped output both times.
  void ExpectRejected(const ExpandedKey& key, absl::Span<const uint8_t> iv,
                      absl::Span<const uint8_t> aad, absl::Span<const uint8_t> ciphertext,
                      absl::Span<const uint8_t> tag, const std::string& what) {
    SCOPED_TRACE(what);
    Bytes out(ciphertext.size(), 0xAA);
    absl::Status status = key.Open(iv, aad, ciphertext, tag, absl::MakeSpan(out));
    EXPECT_TRUE(IsDecryptionFailure(status)) << "out of place: " << status;
    EXPECT_TRUE(AllZero(out)) << "out of place, output not wiped: " << Hex(out);

    Bytes buffer(ciphertext.begin(), ciphertext.end());
    status = key.Open(iv, aad, buffer, tag, absl::MakeSpan(buffer));
    EXPECT_TRUE(IsDecryptionFailure(status)) << "in place: " << status;
    EXPECT_TRUE(AllZero(buffer)) << "in place, output not wiped: " << Hex(buffer);
  }
};

INSTANTIATE_TEST_SUITE_P(Impl, AesGcmTest, ::testing::ValuesIn(test::ImplementationsUnderTest()),
                         test::ImplementationTestName);

// --- Known answers -----------------------------------------------------------------

TEST_P(AesGcmTest, SpecVectors) {
  using test::AttributeKind;
  absl::StatusOr<std::vector<test::TestVector>> vectors =
      test::ReadTestVectors(kSpecVectors, {{"Count", AttributeKind::kDecimal},
                                           {"Key", AttributeKind::kHex},
                                           {"IV", AttributeKind::kHex},
                                           {"AAD", AttributeKind::kHex},
                                           {"PT", AttributeKind::kHex},
                                           {"CT", AttributeKind::kHex},
                                           {"Tag", AttributeKind::kHex}});
  ASSERT_TRUE(vectors.ok()) << vectors.status();
  ASSERT_EQ(vectors->size(), 18u);

  uint64_t count = 0;
  for (const test::TestVector& v : *vectors) {
    SCOPED_TRACE(absl::StrCat(v.location(), " (test case ", v.Number("Count"), ")"));
    EXPECT_EQ(v.Number("Count"), ++count);
    const Bytes& iv = v.Bytes("IV");
    const Bytes& aad = v.Bytes("AAD");
    const Bytes& pt = v.Bytes("PT");
    const Bytes& ct = v.Bytes("CT");
    const Bytes& tag = v.Bytes("Tag");
    ASSERT_EQ(pt.size(), ct.size());
    ASSERT_EQ(tag.size(), kMaxTagBytes);
    std::unique_ptr<ExpandedKey> key = NewKey(v.Bytes("Key"));
    ASSERT_NE(key, nullptr);

    // Seal, out of place and in place.
    Bytes out(pt.size(), 0xAA);
    Bytes out_tag(kMaxTagBytes, 0xAA);
    ASSERT_TRUE(key->Seal(iv, aad, pt, absl::MakeSpan(out), absl::MakeSpan(out_tag)).ok());
    EXPECT_EQ(Hex(out), Hex(ct));
    EXPECT_EQ(Hex(out_tag), Hex(tag));
    Bytes buffer = pt;
    ASSERT_TRUE(key->Seal(iv, aad, buffer, absl::MakeSpan(buffer), absl::MakeSpan(out_tag)).ok());
    EXPECT_EQ(Hex(buffer), Hex(ct)) << "in place";
    EXPECT_EQ(Hex(out_tag), Hex(tag)) << "in place";

    // Open, out of place and in place.
    out.assign(ct.size(), 0xAA);
    absl::Status opened = key->Open(iv, aad, ct, tag, absl::MakeSpan(out));
    EXPECT_TRUE(opened.ok()) << opened;
    EXPECT_EQ(Hex(out), Hex(pt));
    buffer = ct;
    opened = key->Open(iv, aad, buffer, tag, absl::MakeSpan(buffer));
    EXPECT_TRUE(opened.ok()) << "in place: " << opened;
    EXPECT_EQ(Hex(buffer), Hex(pt)) << "in place";

    // A key made for short tags seals a prefix of the full tag and opens with it;
    // the 16-byte key refuses that prefix, and the short-tag key the full tag.
    for (size_t tag_size : kValidTagSizes) {
      SCOPED_TRACE(absl::StrCat("tag of ", tag_size, " bytes"));
      std::unique_ptr<ExpandedKey> short_key = NewKey(v.Bytes("Key"), tag_size);
      ASSERT_NE(short_key, nullptr);
      EXPECT_EQ(short_key->tag_bytes(), tag_size);
      const Bytes prefix(tag.begin(), tag.begin() + tag_size);
      Bytes short_tag(tag_size, 0xAA);
      out.assign(pt.size(), 0xAA);
      ASSERT_TRUE(
          short_key->Seal(iv, aad, pt, absl::MakeSpan(out), absl::MakeSpan(short_tag)).ok());
      EXPECT_EQ(Hex(short_tag), Hex(prefix));
      out.assign(ct.size(), 0xAA);
      opened = short_key->Open(iv, aad, ct, prefix, absl::MakeSpan(out));
      EXPECT_TRUE(opened.ok()) << opened;
      EXPECT_EQ(Hex(out), Hex(pt));
      if (tag_size < kMaxTagBytes) {
        ExpectRejected(*key, iv, aad, ct, prefix, "a truncated tag, to the 16-byte key");
        ExpectRejected(*short_key, iv, aad, ct, tag, "the full tag, to a short-tag key");
      }
    }
  }
}

// --- Arguments -----------------------------------------------------------------------

TEST_P(AesGcmTest, AcceptsAesKeySizes) {
  for (size_t size : {16, 24, 32}) {
    const Bytes raw(size, 0x5c);
    absl::StatusOr<std::unique_ptr<ExpandedKey>> key = ExpandedKey::Create(raw, GetParam());
    ASSERT_TRUE(key.ok()) << size << ": " << key.status();
    EXPECT_EQ((*key)->key_bytes(), size);
    EXPECT_EQ((*key)->implementation(), GetParam());
  }
}

TEST_P(AesGcmTest, RejectsOtherKeySizes) {
  for (size_t size : {0, 1, 15, 17, 23, 25, 31, 33, 64}) {
    const Bytes raw(size, 0x5c);
    absl::StatusOr<std::unique_ptr<ExpandedKey>> key = ExpandedKey::Create(raw, GetParam());
    ASSERT_FALSE(key.ok()) << size;
    EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument) << size;
    EXPECT_THAT(std::string(key.status().message()), HasSubstr("16, 24 or 32"));
    EXPECT_THAT(std::string(key.status().message()), HasSubstr(absl::StrCat("not ", size)));
  }
}

TEST_P(AesGcmTest, RejectsUnknownImplementation) {
  const Bytes raw(16, 0);
  absl::StatusOr<std::unique_ptr<ExpandedKey>> key =
      ExpandedKey::Create(raw, "no-such-implementation");
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
  // The message names the bad choice and lists the real ones.
  EXPECT_THAT(std::string(key.status().message()), HasSubstr("no-such-implementation"));
  EXPECT_THAT(std::string(key.status().message()), HasSubstr(GetParam()));
}

TEST_P(AesGcmTest, RejectsEmptyIv) {
  std::unique_ptr<ExpandedKey> key = NewKey(Bytes(16, 1));
  ASSERT_NE(key, nullptr);
  Bytes text(20, 3), tag(16);
  absl::Status status = key->Seal({}, {}, text, absl::MakeSpan(text), absl::MakeSpan(tag));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("IV"));
  status = key->Open({}, {}, text, tag, absl::MakeSpan(text));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("IV"));
  EXPECT_FALSE(IsDecryptionFailure(status));
}

TEST_P(AesGcmTest, RejectsOtherTagSizes) {
  // No key is made for a tag length SP 800-38D does not allow.
  for (size_t size : {0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 17, 32}) {
    absl::StatusOr<std::unique_ptr<ExpandedKey>> key =
        ExpandedKey::CreateWithTagBytes(Bytes(16, 1), size, GetParam());
    EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument) << size;
    EXPECT_THAT(std::string(key.status().message()), HasSubstr("tag length")) << size;
  }
  // A key seals only tags of its own length, and any other length fails to open.
  const Bytes iv(12, 2), pt(20, 3);
  Bytes out(pt.size());
  for (size_t key_tag : {size_t{16}, size_t{12}, size_t{4}}) {
    std::unique_ptr<ExpandedKey> key = NewKey(Bytes(16, 1), key_tag);
    ASSERT_NE(key, nullptr);
    for (size_t size : {0, 4, 8, 11, 12, 15, 16, 17, 32}) {
      if (size == key_tag) continue;
      Bytes tag(size);
      absl::Status status = key->Seal(iv, {}, pt, absl::MakeSpan(out), absl::MakeSpan(tag));
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << size;
      EXPECT_THAT(std::string(status.message()), HasSubstr("-byte tags")) << size;
      ExpectRejected(*key, iv, {}, pt, tag,
                     absl::StrCat(size, "-byte tag to a key of ", key_tag, "-byte tags"));
    }
  }
}

TEST_P(AesGcmTest, RejectsOutputOfAnotherSize) {
  std::unique_ptr<ExpandedKey> key = NewKey(Bytes(32, 1));
  ASSERT_NE(key, nullptr);
  const Bytes iv(12, 2), input(32, 3);
  Bytes tag(16);
  for (size_t size : {0, 31, 33}) {
    Bytes out(size);
    absl::Status status = key->Seal(iv, {}, input, absl::MakeSpan(out), absl::MakeSpan(tag));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << size;
    EXPECT_THAT(std::string(status.message()), HasSubstr("output")) << size;
    status = key->Open(iv, {}, input, tag, absl::MakeSpan(out));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << size;
    EXPECT_FALSE(IsDecryptionFailure(status)) << size;
  }
}

TEST_P(AesGcmTest, RejectsPartiallyOverlappingBuffers) {
  std::unique_ptr<ExpandedKey> key = NewKey(Bytes(24, 1));
  ASSERT_NE(key, nullptr);
  const Bytes iv(12, 2);
  Bytes buffer(96, 3), tag(16);
  const absl::Span<uint8_t> all = absl::MakeSpan(buffer);
  const absl::Span<const uint8_t> input = all.subspan(32, 32);
  for (size_t offset : {1, 15, 31, 33, 47, 63}) {
    const absl::Span<uint8_t> output = all.subspan(offset, 32);
    absl::Status status = key->Seal(iv, {}, input, output, absl::MakeSpan(tag));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << offset;
    EXPECT_THAT(std::string(status.message()), HasSubstr("overlap")) << offset;
    status = key->Open(iv, {}, input, tag, output);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << offset;
    EXPECT_FALSE(IsDecryptionFailure(status)) << offset;
  }
  // Adjacent buffers do not overlap; the very same buffer is in-place use.
  for (size_t offset : {0, 32, 64}) {
    EXPECT_TRUE(key->Seal(iv, {}, input, all.subspan(offset, 32), absl::MakeSpan(tag)).ok())
        << offset;
  }
}

TEST_P(AesGcmTest, EmptyMessageWithEmptySpans) {
  std::unique_ptr<ExpandedKey> key = NewKey(Bytes(16, 0));
  ASSERT_NE(key, nullptr);
  const Bytes iv(12, 0);
  Bytes tag(16);
  ASSERT_TRUE(key->Seal(iv, {}, {}, {}, absl::MakeSpan(tag)).ok());
  EXPECT_EQ(Hex(tag), "58e2fccefa7e3061367f1d57a4e7455a");  // spec test case 1
  EXPECT_TRUE(key->Open(iv, {}, {}, tag, {}).ok());
}

// --- Forgeries -----------------------------------------------------------------------

struct Message {
  size_t key_bytes;
  size_t plaintext_bytes;
  size_t aad_bytes;
  size_t iv_bytes;
  size_t tag_bytes;
};

// Empty plaintext and AAD, partial and whole blocks, 12-byte and other IVs, short tags.
constexpr Message kMessages[] = {
    {16, 0, 0, 12, 16}, {24, 0, 20, 12, 16},  {32, 1, 0, 12, 16},
    {16, 16, 0, 8, 16}, {24, 33, 13, 12, 16}, {32, 47, 1, 60, 12},
    {16, 64, 32, 1, 8}, {32, 5, 17, 16, 4},   {24, 0, 0, 13, 13},
};

TEST_P(AesGcmTest, RejectsEveryBitFlip) {
  std::mt19937_64 rng(1);
  for (const Message& m : kMessages) {
    SCOPED_TRACE(absl::StrCat("key ", m.key_bytes, " pt ", m.plaintext_bytes, " aad ", m.aad_bytes,
                              " iv ", m.iv_bytes, " tag ", m.tag_bytes));
    const Bytes raw_key = RandomBytes(rng, m.key_bytes);
    const Bytes iv = RandomBytes(rng, m.iv_bytes);
    const Bytes aad = RandomBytes(rng, m.aad_bytes);
    const Bytes pt = RandomBytes(rng, m.plaintext_bytes);
    std::unique_ptr<ExpandedKey> key = NewKey(raw_key, m.tag_bytes);
    ASSERT_NE(key, nullptr);
    Bytes ct(pt.size()), tag(m.tag_bytes);
    ASSERT_TRUE(key->Seal(iv, aad, pt, absl::MakeSpan(ct), absl::MakeSpan(tag)).ok());
    Bytes out(ct.size());
    ASSERT_TRUE(key->Open(iv, aad, ct, tag, absl::MakeSpan(out)).ok());
    ASSERT_EQ(Hex(out), Hex(pt));

    auto each_bit = [&](const char* what, const Bytes& original, auto&& check) {
      for (size_t bit = 0; bit < original.size() * 8; ++bit) {
        Bytes changed = original;
        changed[bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
        check(changed, absl::StrCat(what, " bit ", bit));
        if (HasFailure()) return;  // one report per message is enough
      }
    };
    each_bit("ciphertext", ct, [&](const Bytes& c, const std::string& what) {
      ExpectRejected(*key, iv, aad, c, tag, what);
    });
    each_bit("tag", tag, [&](const Bytes& t, const std::string& what) {
      ExpectRejected(*key, iv, aad, ct, t, what);
    });
    each_bit("aad", aad, [&](const Bytes& a, const std::string& what) {
      ExpectRejected(*key, iv, a, ct, tag, what);
    });
    each_bit("iv", iv, [&](const Bytes& i, const std::string& what) {
      ExpectRejected(*key, i, aad, ct, tag, what);
    });
    if (HasFailure()) return;
  }
}

TEST_P(AesGcmTest, RejectsChangedAndExtendedTags) {
  std::mt19937_64 rng(2);
  for (const Message& m : kMessages) {
    SCOPED_TRACE(absl::StrCat("pt ", m.plaintext_bytes, " iv ", m.iv_bytes));
    const Bytes raw_key = RandomBytes(rng, m.key_bytes);
    const Bytes iv = RandomBytes(rng, m.iv_bytes);
    const Bytes aad = RandomBytes(rng, m.aad_bytes);
    const Bytes pt = RandomBytes(rng, m.plaintext_bytes);
    for (size_t size : kValidTagSizes) {
      std::unique_ptr<ExpandedKey> key = NewKey(raw_key, size);
      ASSERT_NE(key, nullptr);
      Bytes ct(pt.size()), tag(size);
      ASSERT_TRUE(key->Seal(iv, aad, pt, absl::MakeSpan(ct), absl::MakeSpan(tag)).ok());
      // The sealed tag with its first or last byte wrong.
      for (size_t wrong : {size_t{0}, size - 1}) {
        Bytes offered = tag;
        offered[wrong] ^= 0x80;
        ExpectRejected(*key, iv, aad, ct, offered,
                       absl::StrCat(size, "-byte tag, byte ", wrong, " changed"));
      }
      // The right tag with made-up bytes after it, or cut short.
      Bytes extended = tag;
      extended.push_back(0);
      ExpectRejected(*key, iv, aad, ct, extended, absl::StrCat(size, "-byte tag extended"));
      if (size > 4) {
        ExpectRejected(*key, iv, aad, ct, absl::MakeSpan(tag).first(size - 1),
                       absl::StrCat(size, "-byte tag cut by one byte"));
      }
    }
  }
}

TEST_P(AesGcmTest, RejectsWrongKeys) {
  std::mt19937_64 rng(3);
  for (const Message& m : kMessages) {
    SCOPED_TRACE(absl::StrCat("key ", m.key_bytes, " pt ", m.plaintext_bytes));
    const Bytes raw_key = RandomBytes(rng, 32);
    const Bytes sealing_key(raw_key.begin(), raw_key.begin() + m.key_bytes);
    std::unique_ptr<ExpandedKey> key = NewKey(sealing_key, m.tag_bytes);
    ASSERT_NE(key, nullptr);
    const Bytes iv = RandomBytes(rng, m.iv_bytes);
    const Bytes aad = RandomBytes(rng, m.aad_bytes);
    const Bytes pt = RandomBytes(rng, m.plaintext_bytes);
    Bytes ct(pt.size()), tag(m.tag_bytes);
    ASSERT_TRUE(key->Seal(iv, aad, pt, absl::MakeSpan(ct), absl::MakeSpan(tag)).ok());

    std::vector<std::pair<std::string, Bytes>> wrong_keys;
    for (size_t bit : {size_t{0}, m.key_bytes * 8 - 1}) {
      Bytes k = sealing_key;
      k[bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
      wrong_keys.emplace_back(absl::StrCat("key bit ", bit, " flipped"), k);
    }
    for (size_t size : {16, 24, 32}) {  // another size sharing the key's bytes
      if (size != m.key_bytes) {
        wrong_keys.emplace_back(absl::StrCat(size, "-byte key"),
                                Bytes(raw_key.begin(), raw_key.begin() + size));
      }
    }
    for (const auto& [what, k] : wrong_keys) {
      std::unique_ptr<ExpandedKey> wrong = NewKey(k, m.tag_bytes);
      ASSERT_NE(wrong, nullptr);
      ExpectRejected(*wrong, iv, aad, ct, tag, what);
    }
  }
}

}  // namespace
}  // namespace sealbox::crypto
