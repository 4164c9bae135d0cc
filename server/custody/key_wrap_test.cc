#include "server/custody/key_wrap.h"

#include <openssl/rand.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sealbox::server::custody {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<uint8_t> RandomBytes(size_t n) {
  std::vector<uint8_t> out(n);
  EXPECT_EQ(RAND_bytes(out.data(), static_cast<int>(n)), 1);
  return out;
}

std::vector<uint8_t> FromHex(absl::string_view hex) {
  std::string bytes = absl::HexStringToBytes(hex);
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

std::vector<uint8_t> ToVector(const crypto::SecretBytes& s) {
  return std::vector<uint8_t>(s.data(), s.data() + s.size());
}

// Key generation is the slow part, so most tests share one RSA-2048 pair.
const ImportKeyPair& SharedKey() {
  static const ImportKeyPair* key = new ImportKeyPair(ImportKeyPair::Generate(2048).value());
  return *key;
}

size_t KwpBytes(size_t material) { return (material + 7) / 8 * 8 + 8; }

void ExpectRoundTrips(const ImportKeyPair& key) {
  const size_t rsa_bytes = static_cast<size_t>(key.bits() / 8);
  for (size_t n : {16, 32, 33, 64}) {
    SCOPED_TRACE(absl::StrCat(n, "-byte material"));
    const std::vector<uint8_t> material = RandomBytes(n);
    for (const std::string& public_key : {key.PublicKeyPem(), key.PublicKeyDer()}) {
      absl::StatusOr<std::string> wrapped = WrapKeyMaterial(public_key, material);
      ASSERT_TRUE(wrapped.ok()) << wrapped.status();
      EXPECT_EQ(wrapped->size(), rsa_bytes + KwpBytes(n));
      absl::StatusOr<crypto::SecretBytes> unwrapped = UnwrapKeyMaterial(key, *wrapped);
      ASSERT_TRUE(unwrapped.ok()) << unwrapped.status();
      EXPECT_EQ(ToVector(*unwrapped), material);
    }
  }
}

TEST(KeyWrapTest, RoundTripsUnderRsa2048) {
  EXPECT_EQ(SharedKey().bits(), 2048);
  ExpectRoundTrips(SharedKey());
}

TEST(KeyWrapTest, RoundTripsUnderRsa4096) {
  absl::StatusOr<ImportKeyPair> key = ImportKeyPair::Generate();
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->bits(), 4096);
  ExpectRoundTrips(*key);
}

TEST(KeyWrapTest, PublicKeyIsSubjectPublicKeyInfo) {
  EXPECT_THAT(SharedKey().PublicKeyPem(), ::testing::StartsWith("-----BEGIN PUBLIC KEY-----\n"));
  EXPECT_THAT(SharedKey().PublicKeyPem(), ::testing::EndsWith("-----END PUBLIC KEY-----\n"));
  // SEQUENCE { SEQUENCE { rsaEncryption, NULL }, BIT STRING }
  const std::string rsa_encryption = absl::HexStringToBytes("06092a864886f70d0101010500");
  EXPECT_THAT(SharedKey().PublicKeyDer(), HasSubstr(rsa_encryption));
}

// RFC 5649 section 6: both vectors use a 192-bit KEK.
TEST(KeyWrapTest, AesKeyWrapPadMatchesRfc5649) {
  const std::vector<uint8_t> kek = FromHex("5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8");
  struct Vector {
    const char* key;
    const char* wrapped;
  };
  for (const Vector& v : {
           Vector{"c37b7e6492584340bed12207808941155068f738",
                  "138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a"},
           Vector{"466f7250617369", "afbeb0f07dfbf5419200f2ccb50bb24f"},
       }) {
    SCOPED_TRACE(v.key);
    absl::StatusOr<std::string> wrapped = AesKeyWrapPad(kek, FromHex(v.key));
    ASSERT_TRUE(wrapped.ok()) << wrapped.status();
    EXPECT_EQ(absl::BytesToHexString(*wrapped), v.wrapped);

    absl::StatusOr<crypto::SecretBytes> unwrapped =
        AesKeyUnwrapPad(kek, absl::HexStringToBytes(v.wrapped));
    ASSERT_TRUE(unwrapped.ok()) << unwrapped.status();
    EXPECT_EQ(ToVector(*unwrapped), FromHex(v.key));

    std::string altered = absl::HexStringToBytes(v.wrapped);
    altered[3] ^= 1;
    EXPECT_EQ(AesKeyUnwrapPad(kek, altered).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

// A scratch directory for the openssl command line, under the test's TEST_TMPDIR.
class OpenSslCommandLineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/key_wrap.XXXXXX");
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }

  void Write(const std::string& name, absl::string_view bytes) {
    std::ofstream out(dir_ + "/" + name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << name;
  }
  void Write(const std::string& name, absl::Span<const uint8_t> bytes) {
    Write(name, absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }

  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Runs `script` with /bin/sh in the directory, stopping at the first failing command,
  // as an operator would type it. `hex FILE` prints a file as hex for `openssl enc -K`.
  ::testing::AssertionResult Sh(const std::string& script) {
    Write("run.sh",
          absl::StrCat("hex() { if command -v xxd >/dev/null 2>&1; then xxd -p -c 64 \"$1\"; "
                       "else od -An -tx1 -v \"$1\" | tr -d ' \\n'; fi; }\n",
                       script));
    const std::string command = absl::StrCat("cd '", dir_, "' && sh -e run.sh >sh.log 2>&1");
    if (std::system(command.c_str()) == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << script << "\nfailed:\n" << Read("sh.log");
  }

  std::string dir_;
};

constexpr absl::string_view kOaepOptions =
    "-pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_mgf1_md:sha256";

TEST_F(OpenSslCommandLineTest, WhatTheCommandLineWrapsUnwraps) {
  for (size_t n : {16, 33}) {
    SCOPED_TRACE(absl::StrCat(n, "-byte material"));
    const std::vector<uint8_t> material = RandomBytes(n);
    Write("pub.pem", SharedKey().PublicKeyPem());
    Write("material.bin", material);
    ASSERT_TRUE(Sh(absl::StrCat(
        "openssl rand -out aes.key 32\n",
        "openssl pkeyutl -encrypt -pubin -inkey pub.pem -in aes.key -out aes.key.enc ",
        kOaepOptions, "\n",
        "openssl enc -id-aes256-wrap-pad -K $(hex aes.key) -iv A65959A6 -in material.bin "
        "-out material.wrapped\n",
        "cat aes.key.enc material.wrapped > wrapped.bin\n")));

    absl::StatusOr<crypto::SecretBytes> unwrapped =
        UnwrapKeyMaterial(SharedKey(), Read("wrapped.bin"));
    ASSERT_TRUE(unwrapped.ok()) << unwrapped.status();
    EXPECT_EQ(ToVector(*unwrapped), material);
  }
}

TEST_F(OpenSslCommandLineTest, WhatWeWrapTheCommandLineUnwraps) {
  const std::vector<uint8_t> material = RandomBytes(33);
  absl::StatusOr<std::string> wrapped = WrapKeyMaterial(SharedKey().PublicKeyPem(), material);
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  absl::StatusOr<crypto::SecretBytes> private_der = SharedKey().PrivateKeyDer();
  ASSERT_TRUE(private_der.ok()) << private_der.status();
  Write("priv.der", private_der->span());
  Write("wrapped.bin", *wrapped);

  ASSERT_TRUE(Sh(absl::StrCat(
      "openssl pkey -inform DER -in priv.der -out priv.pem\n",
      "head -c 256 wrapped.bin > aes.key.enc\n",  // RSA-2048: 256 bytes of RSA-OAEP
      "tail -c +257 wrapped.bin > material.wrapped\n",
      "openssl pkeyutl -decrypt -inkey priv.pem -in aes.key.enc -out aes.key ", kOaepOptions, "\n",
      "openssl enc -d -id-aes256-wrap-pad -K $(hex aes.key) -iv A65959A6 -in material.wrapped "
      "-out material.bin\n")));
  EXPECT_EQ(Read("material.bin"), std::string(material.begin(), material.end()));
}

// CKM_RSA_AES_KEY_WRAP allows a shorter one-time key; this format does not.
TEST_F(OpenSslCommandLineTest, RefusesAShorterOneTimeKey) {
  Write("pub.pem", SharedKey().PublicKeyPem());
  Write("material.bin", RandomBytes(32));
  ASSERT_TRUE(Sh(absl::StrCat(
      "openssl rand -out aes.key 16\n",
      "openssl pkeyutl -encrypt -pubin -inkey pub.pem -in aes.key -out aes.key.enc ", kOaepOptions,
      "\n",
      "openssl enc -id-aes128-wrap-pad -K $(hex aes.key) -iv A65959A6 -in material.bin "
      "-out material.wrapped\n",
      "cat aes.key.enc material.wrapped > wrapped.bin\n")));
  absl::StatusOr<crypto::SecretBytes> unwrapped =
      UnwrapKeyMaterial(SharedKey(), Read("wrapped.bin"));
  EXPECT_EQ(unwrapped.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unwrapped.status().message(), HasSubstr("must be AES-256 (32 bytes)"));
}

// Each refusal is INVALID_ARGUMENT with the expected sentence, and never shows the
// material, as bytes or as hex.
void ExpectRefused(const absl::StatusOr<crypto::SecretBytes>& unwrapped, absl::string_view expected,
                   const std::vector<uint8_t>& material) {
  ASSERT_FALSE(unwrapped.ok());
  EXPECT_EQ(unwrapped.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(unwrapped.status().message());
  EXPECT_THAT(message, HasSubstr(expected));
  const std::string raw(material.begin(), material.end());
  EXPECT_THAT(message, Not(HasSubstr(raw)));
  EXPECT_THAT(message, Not(HasSubstr(absl::BytesToHexString(raw))));
  EXPECT_THAT(message, Not(HasSubstr(absl::AsciiStrToUpper(absl::BytesToHexString(raw)))));
}

class RefusalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> wrapped = WrapKeyMaterial(SharedKey().PublicKeyDer(), material_);
    ASSERT_TRUE(wrapped.ok()) << wrapped.status();
    wrapped_ = *wrapped;
  }

  const std::vector<uint8_t> material_ = RandomBytes(32);
  std::string wrapped_;  // 256 bytes of RSA-OAEP, then 40 of key wrap
};

TEST_F(RefusalTest, TruncatedBlob) {
  for (size_t length : {size_t{0}, size_t{255}, size_t{256 + 8}, wrapped_.size() - 1}) {
    SCOPED_TRACE(length);
    ExpectRefused(UnwrapKeyMaterial(SharedKey(), wrapped_.substr(0, length)),
                  absl::StrCat("the wrapped key material is ", length,
                               " bytes; an RSA-2048 import key's wrapped material is 256 bytes "
                               "of RSA-OAEP followed by 16 to"),
                  material_);
  }
  // Whole blocks missing from the end: the length fits, the integrity check does not.
  ExpectRefused(UnwrapKeyMaterial(SharedKey(), wrapped_.substr(0, wrapped_.size() - 8)),
                "the key material does not unwrap", material_);
}

TEST_F(RefusalTest, WrappedForAnotherKeyPair) {
  absl::StatusOr<ImportKeyPair> other = ImportKeyPair::Generate(2048);
  ASSERT_TRUE(other.ok()) << other.status();
  ExpectRefused(UnwrapKeyMaterial(*other, wrapped_),
                "does not decrypt under this import key: wrapped for another key, or with other "
                "OAEP parameters (SHA-256, MGF1-SHA-256",
                material_);
}

TEST_F(RefusalTest, FlippedByteInRsaPart) {
  for (size_t at : {size_t{0}, size_t{100}, size_t{255}}) {
    SCOPED_TRACE(at);
    std::string altered = wrapped_;
    altered[at] ^= 0x10;
    ExpectRefused(UnwrapKeyMaterial(SharedKey(), altered), "does not decrypt under this import key",
                  material_);
  }
}

TEST_F(RefusalTest, FlippedByteInKeyWrapPart) {
  for (size_t at : {size_t{256}, size_t{256 + 8}, wrapped_.size() - 1}) {
    SCOPED_TRACE(at);
    std::string altered = wrapped_;
    altered[at] ^= 0x10;
    ExpectRefused(UnwrapKeyMaterial(SharedKey(), altered),
                  "the key material does not unwrap: altered, or wrapped under another AES key",
                  material_);
  }
}

TEST(KeyWrapTest, RefusesKeysAndMaterialItDoesNotTake) {
  EXPECT_EQ(ImportKeyPair::Generate(1024).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WrapKeyMaterial("not a key", RandomBytes(32)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WrapKeyMaterial(SharedKey().PublicKeyDer() + "x", RandomBytes(32)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WrapKeyMaterial(SharedKey().PublicKeyPem(), {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WrapKeyMaterial(SharedKey().PublicKeyPem(), RandomBytes(kMaxKeyMaterialBytes + 1))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KeyWrapTest, PrivateKeyDerRoundTrips) {
  const std::vector<uint8_t> material = RandomBytes(64);
  absl::StatusOr<std::string> wrapped = WrapKeyMaterial(SharedKey().PublicKeyPem(), material);
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();

  absl::StatusOr<crypto::SecretBytes> der = SharedKey().PrivateKeyDer();
  ASSERT_TRUE(der.ok()) << der.status();
  absl::StatusOr<ImportKeyPair> restored = ImportKeyPair::FromPrivateKeyDer(der->span());
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(restored->bits(), 2048);
  EXPECT_EQ(restored->PublicKeyDer(), SharedKey().PublicKeyDer());
  EXPECT_EQ(restored->PublicKeyPem(), SharedKey().PublicKeyPem());

  absl::StatusOr<crypto::SecretBytes> unwrapped = UnwrapKeyMaterial(*restored, *wrapped);
  ASSERT_TRUE(unwrapped.ok()) << unwrapped.status();
  EXPECT_EQ(ToVector(*unwrapped), material);
}

TEST(KeyWrapTest, FromPrivateKeyDerRefusesOtherBytes) {
  absl::StatusOr<crypto::SecretBytes> der = SharedKey().PrivateKeyDer();
  ASSERT_TRUE(der.ok()) << der.status();
  std::vector<uint8_t> trailing = ToVector(*der);
  trailing.push_back(0);
  std::vector<uint8_t> truncated = ToVector(*der);
  truncated.pop_back();
  const std::vector<uint8_t> public_der(SharedKey().PublicKeyDer().begin(),
                                        SharedKey().PublicKeyDer().end());
  for (const std::vector<uint8_t>& bytes :
       {std::vector<uint8_t>{}, trailing, truncated, public_der}) {
    absl::StatusOr<ImportKeyPair> key = ImportKeyPair::FromPrivateKeyDer(bytes);
    EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(key.status().message(),
                HasSubstr("the import key is not an RSA private key in PKCS#8 DER"));
  }
}

}  // namespace
}  // namespace sealbox::server::custody
