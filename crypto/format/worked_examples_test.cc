// The worked examples of docs/FORMAT.md, recomputed by the code. Each expected value
// below must also appear in the document, so neither can change without the other.
#include <openssl/sha.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "crypto/aes_gcm.h"
#include "crypto/format/derivation.h"
#include "crypto/format/envelope.h"
#include "crypto/format/stream.h"
#include "crypto/format/test_bytes.h"
#include "crypto/format/unary.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

using test::Bytes;
using test::FromHex;
using test::FromString;
using test::Hex;
using test::Sequence;

// docs/FORMAT.md, in the test's runfiles.
constexpr char kFormatDoc[] = "docs/FORMAT.md";

// Inputs shared by both examples.
const Bytes kExampleMaterial = Sequence(32, 0x00);
const KeyContext kExampleContext = {"demo", "default", 1};
const Bytes kExampleAad = FromString("record-42");

// The document with all whitespace removed, so hex split over lines or into groups
// still matches.
std::string DocWithoutSpaces() {
  std::ifstream file(kFormatDoc);
  std::stringstream text;
  text << file.rdbuf();
  std::string doc = text.str();
  EXPECT_FALSE(doc.empty()) << "cannot read " << kFormatDoc;
  doc.erase(std::remove_if(doc.begin(), doc.end(), ::isspace), doc.end());
  return doc;
}

void ExpectInDoc(const std::string& hex, const char* what) {
  static const std::string* doc = new std::string(DocWithoutSpaces());
  EXPECT_NE(doc->find(hex), std::string::npos) << what << " " << hex << " is not in docs/FORMAT.md";
}

// ---------------------------------------------------------------------------------
// Unary: epoch id a0..af, counter 1, plaintext "hello, sealbox".

constexpr char kUnaryInfo[] = "7365616c626f782f76312f756e6172790464656d6f0764656661756c74";
constexpr char kUnarySubkey[] = "5b9f3f0bdf26d13511f687f6cd762b598976fc894aa2e2d700a8c780a4f598f7";
constexpr char kUnaryCiphertext[] =
    "0100000001a0a1a2a3a4a5a6a7a8a9aaabacadaeaf000000000000000000000001"  // header
    "0e51c3e39179a6bfeccc452ef740"                                        // "hello, sealbox"
    "f8740b5941e494a203a2dc0748290617";                                   // tag

TEST(WorkedExamplesTest, Unary) {
  EpochId epoch;
  for (size_t i = 0; i < epoch.size(); ++i) epoch[i] = static_cast<uint8_t>(0xa0 + i);
  const Bytes plaintext = FromString("hello, sealbox");

  absl::StatusOr<Bytes> info = UnaryInfo(kExampleContext.tenant, kExampleContext.key_name);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(Hex(*info), kUnaryInfo);
  absl::StatusOr<SecretBytes> subkey = DeriveSubkey(kExampleMaterial, epoch, *info);
  ASSERT_TRUE(subkey.ok());
  EXPECT_EQ(Hex(subkey->span()), kUnarySubkey);

  auto epoch_subkey = EpochSubkey::DeriveForTesting(kExampleMaterial, kExampleContext, epoch, 1);
  ASSERT_TRUE(epoch_subkey.ok());
  absl::StatusOr<Bytes> sealed = (*epoch_subkey)->Seal(plaintext, kExampleAad);
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(Hex(*sealed), kUnaryCiphertext);
  absl::StatusOr<Bytes> opened = (*epoch_subkey)->Open(FromHex(kUnaryCiphertext), kExampleAad);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(*opened, plaintext);

  for (const char* hex : {kUnaryInfo, kUnarySubkey, kUnaryCiphertext}) {
    ExpectInDoc(hex, "unary example value");
  }
}

// ---------------------------------------------------------------------------------
// Stream: segment size 4096, salt 40..5f, nonce prefix 60..66, plaintext 5000 bytes
// with byte i = i mod 251: a full segment and a last one of 904 bytes.

constexpr char kStreamHeader[] =
    "020000000100001000404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "60616263646566";
constexpr char kStreamInfo[] =
    "7365616c626f782f76312f73747265616d0464656d6f0764656661756c74"
    "00000000000000097265636f72642d3432";
constexpr char kStreamKey[] = "4c0c67eb7f61568955493ef6157e5b06fa58b665a2cf47b85ce96aa05da06063";
constexpr char kPlaintextSha256[] =
    "69dbee893909fa17d1be397e0c07691336fe42049c29d403467d3d4a1fc3b5a1";
struct SegmentValues {
  const char* nonce;
  const char* tag;
};
constexpr SegmentValues kSegments[] = {
    {"606162636465660000000000", "dadfc9f0acc5e1c32b10d09b4069fc77"},
    {"606162636465660000000101", "fa2c915c90ecd564732f1ef4f1c07920"},
};
constexpr size_t kStreamBytes = 48 + (4096 + 16) + (904 + 16);
// Segment 0's first ciphertext bytes, and the end of segment 1 with its tag.
constexpr char kStreamFirst32[] =
    "3d35060fd2b4b1b9f3e9ed072017f39fd137a6f5cc1d1b2e40154d69347f0622";
constexpr char kStreamLast32[] = "d6f4c8d8d971dc1c947a0c3868218d8afa2c915c90ecd564732f1ef4f1c07920";
constexpr char kStreamSha256[] = "3d4e9767873da238f4d9110e226f5c655874ff10797c41e24f02609d0b24166d";

std::string Sha256Hex(absl::Span<const uint8_t> bytes) {
  uint8_t digest[SHA256_DIGEST_LENGTH];
  SHA256(bytes.data(), bytes.size(), digest);
  return Hex(digest);
}

TEST(WorkedExamplesTest, Stream) {
  StreamSalt salt;
  for (size_t i = 0; i < salt.size(); ++i) salt[i] = static_cast<uint8_t>(0x40 + i);
  StreamNoncePrefix prefix;
  for (size_t i = 0; i < prefix.size(); ++i) prefix[i] = static_cast<uint8_t>(0x60 + i);
  Bytes plaintext(5000);
  for (size_t i = 0; i < plaintext.size(); ++i) plaintext[i] = i % 251;
  EXPECT_EQ(Sha256Hex(plaintext), kPlaintextSha256);

  auto sealer = StreamSealer::CreateForTesting(kExampleMaterial, kExampleContext, kExampleAad, 4096,
                                               salt, prefix);
  ASSERT_TRUE(sealer.ok());
  Bytes sealed;
  ASSERT_TRUE((*sealer)->Update(plaintext, sealed).ok());
  ASSERT_TRUE((*sealer)->Finish(sealed).ok());
  ASSERT_EQ(sealed.size(), kStreamBytes);
  const absl::Span<const uint8_t> all = sealed;
  const absl::Span<const uint8_t> header = all.first(48);
  EXPECT_EQ(Hex(header), kStreamHeader);
  EXPECT_EQ(Hex(all.subspan(48, 32)), kStreamFirst32);
  EXPECT_EQ(Hex(all.last(32)), kStreamLast32);
  EXPECT_EQ(Sha256Hex(sealed), kStreamSha256);

  absl::StatusOr<Bytes> info =
      StreamInfo(kExampleContext.tenant, kExampleContext.key_name, kExampleAad);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(Hex(*info), kStreamInfo);
  absl::StatusOr<SecretBytes> stream_key = DeriveSubkey(kExampleMaterial, salt, *info);
  ASSERT_TRUE(stream_key.ok());
  EXPECT_EQ(Hex(stream_key->span()), kStreamKey);

  // Each segment opens with the documented nonce, and ends with the documented tag.
  auto key = ExpandedKey::Create(stream_key->span());
  ASSERT_TRUE(key.ok());
  const absl::Span<const uint8_t> segments[] = {all.subspan(48, 4096 + 16),
                                                all.subspan(48 + 4096 + 16)};
  Bytes opened;
  for (int i = 0; i < 2; ++i) {
    const absl::Span<const uint8_t> s = segments[i];
    Bytes pt(s.size() - 16);
    EXPECT_TRUE((*key)
                    ->Open(FromHex(kSegments[i].nonce), header, s.first(pt.size()), s.last(16),
                           absl::MakeSpan(pt))
                    .ok())
        << "segment " << i;
    EXPECT_EQ(Hex(s.last(16)), kSegments[i].tag) << "segment " << i;
    opened.insert(opened.end(), pt.begin(), pt.end());
  }
  EXPECT_EQ(opened, plaintext);

  for (const char* hex : {kStreamHeader, kStreamInfo, kStreamKey, kPlaintextSha256, kStreamFirst32,
                          kStreamLast32, kStreamSha256}) {
    ExpectInDoc(hex, "stream example value");
  }
  for (const SegmentValues& s : kSegments) {
    ExpectInDoc(s.nonce, "segment nonce");
    ExpectInDoc(s.tag, "segment tag");
  }
}

// ---------------------------------------------------------------------------------
// Envelope: data key 80..9f sealed by the unary example's epoch with counter 2 and
// the same AAD, segment size 4096, nonce prefix 70..76, the stream example's 5000
// plaintext bytes.

constexpr char kSealedDataKey[] =
    "0100000001a0a1a2a3a4a5a6a7a8a9aaabacadaeaf000000000000000000000002"  // header
    "fee917606155140a44911217e2553f1061cb70912f7bf20f99b00a8d51af3395"    // data key
    "6b61fb28d71eb52a45a874a5885814fd";                                   // tag
constexpr char kEnvelopeHeader[] =
    "030000100070717273747576"  // segments' AAD
    "0051";                     // L = 81
constexpr SegmentValues kEnvelopeSegments[] = {
    {"707172737475760000000000", "454f67d0392b349532be2c0ea0bbe03f"},
    {"707172737475760000000101", "d4b3c343ada27a586f889c9034240a06"},
};
constexpr size_t kEnvelopeBytes = 95 + (4096 + 16) + (904 + 16);
constexpr char kEnvelopeSha256[] =
    "03e350e8ac4a06dd9fde1f2f3ad7aba4d02daba1c57d15f7f1e2ab45446a1a61";

TEST(WorkedExamplesTest, Envelope) {
  EpochId epoch;
  for (size_t i = 0; i < epoch.size(); ++i) epoch[i] = static_cast<uint8_t>(0xa0 + i);
  Bytes data_key(32);
  for (size_t i = 0; i < data_key.size(); ++i) data_key[i] = static_cast<uint8_t>(0x80 + i);
  auto epoch_subkey = EpochSubkey::DeriveForTesting(kExampleMaterial, kExampleContext, epoch, 2);
  ASSERT_TRUE(epoch_subkey.ok());
  absl::StatusOr<Bytes> sealed_key = (*epoch_subkey)->Seal(data_key, kExampleAad);
  ASSERT_TRUE(sealed_key.ok());
  EXPECT_EQ(Hex(*sealed_key), kSealedDataKey);

  SegmentNoncePrefix prefix;
  for (size_t i = 0; i < prefix.size(); ++i) prefix[i] = static_cast<uint8_t>(0x70 + i);
  absl::StatusOr<EnvelopeHeader> header = NewEnvelopeHeader(*sealed_key, 4096, prefix);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(Hex(header->bytes), std::string(kEnvelopeHeader) + kSealedDataKey);
  Bytes plaintext(5000);
  for (size_t i = 0; i < plaintext.size(); ++i) plaintext[i] = i % 251;
  auto sealer = EnvelopeSealer(data_key, *header);
  ASSERT_TRUE(sealer.ok());
  Bytes file = header->bytes;
  ASSERT_TRUE((*sealer)->Update(plaintext, file).ok());
  ASSERT_TRUE((*sealer)->Finish(file).ok());
  ASSERT_EQ(file.size(), kEnvelopeBytes);
  EXPECT_EQ(Sha256Hex(file), kEnvelopeSha256);

  // Each segment opens under the data key itself with the documented nonce and the
  // header's first 12 bytes as AAD.
  auto key = ExpandedKey::Create(data_key);
  ASSERT_TRUE(key.ok());
  const absl::Span<const uint8_t> all = file;
  const absl::Span<const uint8_t> segments[] = {all.subspan(95, 4096 + 16),
                                                all.subspan(95 + 4096 + 16)};
  Bytes opened;
  for (int i = 0; i < 2; ++i) {
    const absl::Span<const uint8_t> s = segments[i];
    Bytes pt(s.size() - 16);
    EXPECT_TRUE((*key)
                    ->Open(FromHex(kEnvelopeSegments[i].nonce), all.first(12), s.first(pt.size()),
                           s.last(16), absl::MakeSpan(pt))
                    .ok())
        << "segment " << i;
    EXPECT_EQ(Hex(s.last(16)), kEnvelopeSegments[i].tag) << "segment " << i;
    opened.insert(opened.end(), pt.begin(), pt.end());
  }
  EXPECT_EQ(opened, plaintext);

  for (const char* hex : {kSealedDataKey, kEnvelopeHeader, kEnvelopeSha256}) {
    ExpectInDoc(hex, "envelope example value");
  }
  for (const SegmentValues& s : kEnvelopeSegments) {
    ExpectInDoc(s.nonce, "segment nonce");
    ExpectInDoc(s.tag, "segment tag");
  }
}

}  // namespace
}  // namespace sealbox::crypto
