#include "crypto/format/hkdf.h"

#include "crypto/format/test_bytes.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

using test::Bytes;
using test::FromHex;
using test::Hex;
using test::Sequence;

struct Rfc5869Case {
  const char* name;
  Bytes ikm, salt, info;
  const char* okm;
};

// RFC 5869 appendix A, test cases 1-3 (the SHA-256 ones).
TEST(HkdfSha256Test, Rfc5869) {
  const Rfc5869Case cases[] = {
      {"case 1", Bytes(22, 0x0b), Sequence(13, 0x00), Sequence(10, 0xf0),
       "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b8"
       "87185865"},
      {"case 2", Sequence(80, 0x00), Sequence(80, 0x60), Sequence(80, 0xb0),
       "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7"
       "827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5"
       "c1f3434f1d87"},
      {"case 3", Bytes(22, 0x0b), Bytes(), Bytes(),
       "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4"
       "b61a96c8"},
  };
  for (const Rfc5869Case& c : cases) {
    const Bytes want = FromHex(c.okm);
    absl::StatusOr<SecretBytes> okm = HkdfSha256(c.ikm, c.salt, c.info, want.size());
    ASSERT_TRUE(okm.ok()) << c.name << ": " << okm.status();
    EXPECT_EQ(Hex(okm->span()), c.okm) << c.name;
  }
}

TEST(HkdfSha256Test, ShorterOutputIsAPrefix) {
  absl::StatusOr<SecretBytes> long_okm = HkdfSha256(Bytes(22, 0x0b), {}, {}, 42);
  absl::StatusOr<SecretBytes> short_okm = HkdfSha256(Bytes(22, 0x0b), {}, {}, 16);
  ASSERT_TRUE(long_okm.ok() && short_okm.ok());
  EXPECT_EQ(short_okm->span(), long_okm->span().first(16));
}

TEST(HkdfSha256Test, LengthLimit) {
  EXPECT_TRUE(HkdfSha256(Bytes(32), {}, {}, 255 * 32).ok());
  EXPECT_EQ(HkdfSha256(Bytes(32), {}, {}, 255 * 32 + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sealbox::crypto
