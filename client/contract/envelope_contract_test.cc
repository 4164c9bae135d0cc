// The C++ envelope file code (crypto/format/envelope.h, which the CLI's
// `--envelope` uses) against the client contract: its numbers are contract.json's,
// and it accepts or rejects each static vector as every client library does, a
// damaged header apart from a segment that does not verify.
#include <openssl/sha.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/types/span.h"
#include "crypto/aes_gcm.h"
#include "crypto/format/envelope.h"
#include "crypto/format/segments.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr char kDir[] = "client/contract/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

Struct ReadJson(const std::string& name) {
  Struct json;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(kDir + name), &json).ok())
      << name;
  return json;
}

const Value& Field(const Struct& s, const std::string& name) {
  static const Value missing;
  auto it = s.fields().find(name);
  EXPECT_NE(it, s.fields().end()) << name;
  return it == s.fields().end() ? missing : it->second;
}

TEST(EnvelopeContractTest, NumbersAreTheContracts) {
  const Struct contract = ReadJson("contract.json");
  const Struct& e = Field(contract, "envelope").struct_value();
  auto number = [&](const char* name) { return Field(e, name).number_value(); };
  EXPECT_EQ(kEnvelopeFormatV1, number("format"));
  EXPECT_EQ(kDefaultEnvelopeSegmentBytes, number("writerSegmentBytes"));
  EXPECT_EQ(kMinSegmentBytes, number("minSegmentBytes"));
  EXPECT_EQ(kMaxSegmentBytes, number("maxSegmentBytes"));
  EXPECT_EQ(kMinSealedDataKeyBytes, number("minSealedKeyBytes"));
  EXPECT_EQ(kMaxSealedDataKeyBytes, number("maxSealedKeyBytes"));
  EXPECT_EQ(kEnvelopeFixedHeaderBytes, number("fixedHeaderBytes"));
  EXPECT_EQ(kSegmentNoncePrefixBytes, number("noncePrefixBytes"));
  EXPECT_EQ(kMaxTagBytes, number("tagBytes"));
}

// Opens a whole file as the CLI reads one: "ok" with the plaintext, "EnvelopeFormat"
// for a header that is not an envelope's, "DecryptionFailed" for the segments.
std::string Open(absl::Span<const uint8_t> file, absl::Span<const uint8_t> data_key,
                 std::vector<uint8_t>& plaintext) {
  if (file.size() < kEnvelopeFixedHeaderBytes) return "EnvelopeFormat";
  absl::StatusOr<size_t> header_bytes = EnvelopeHeaderBytes(file.first(kEnvelopeFixedHeaderBytes));
  if (!header_bytes.ok() || file.size() < *header_bytes) return "EnvelopeFormat";
  absl::StatusOr<EnvelopeHeader> header = ParseEnvelopeHeader(file.first(*header_bytes));
  if (!header.ok()) return "EnvelopeFormat";
  auto opener = EnvelopeOpener(data_key, *header);
  if (!opener.ok()) return "opener: " + std::string(opener.status().message());
  file.remove_prefix(*header_bytes);
  if (!(*opener)->Update(file, plaintext).ok() || !(*opener)->Finish(plaintext).ok()) {
    return "DecryptionFailed";
  }
  return "ok";
}

TEST(EnvelopeContractTest, VectorsAcceptedAndRejectedAsTheLibrariesDo) {
  const Struct vectors = ReadJson("vectors/vectors.json");
  const Struct& envelope = Field(vectors, "envelope").struct_value();
  const std::string key = absl::HexStringToBytes(Field(envelope, "dataKey").string_value());
  const auto data_key = absl::MakeSpan(reinterpret_cast<const uint8_t*>(key.data()), key.size());
  int cases = 0;
  for (const Value& c : Field(envelope, "cases").list_value().values()) {
    const std::string name = Field(c.struct_value(), "file").string_value();
    const std::string expect = Field(c.struct_value(), "expect").string_value();
    const std::string file = ReadFile(std::string(kDir) + "vectors/" + name);
    std::vector<uint8_t> plaintext;
    EXPECT_EQ(Open(absl::MakeSpan(reinterpret_cast<const uint8_t*>(file.data()), file.size()),
                   data_key, plaintext),
              expect)
        << name;
    if (expect == "ok") {
      uint8_t digest[SHA256_DIGEST_LENGTH];
      SHA256(plaintext.data(), plaintext.size(), digest);
      EXPECT_EQ(absl::BytesToHexString(
                    absl::string_view(reinterpret_cast<const char*>(digest), sizeof digest)),
                Field(c.struct_value(), "plaintextSha256").string_value())
          << name;
    }
    ++cases;
  }
  EXPECT_GT(cases, 20);
}

}  // namespace
}  // namespace sealbox::crypto
