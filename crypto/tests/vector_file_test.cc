// The vector reader must reject every malformed file, naming the line, so that a
// typo in a data file fails loudly instead of skipping a check.
#include "crypto/testing/vector_file.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sealbox::crypto::test {
namespace {

using ::testing::HasSubstr;

const std::vector<Attribute> kSchema = {
    {"Count", AttributeKind::kDecimal},
    {"Key", AttributeKind::kHex},
    {"AAD", AttributeKind::kHex},
};

TEST(VectorFileTest, ParsesBlocksCommentsAndEmptyValues) {
  auto vectors = ParseTestVectors(
      "# comment\n"
      "\n"
      "Count = 7\n"
      "Key = 00fF10\n"
      "AAD =\n"
      "\n\n"
      "  # indented comment\n"
      "Count=8\r\n"
      "AAD = ab   \n"
      "Key = \n",
      "f.txt", kSchema);
  ASSERT_TRUE(vectors.ok()) << vectors.status();
  ASSERT_EQ(vectors->size(), 2u);
  EXPECT_EQ((*vectors)[0].location(), "f.txt:3");
  EXPECT_EQ((*vectors)[0].Number("Count"), 7u);
  EXPECT_EQ((*vectors)[0].Bytes("Key"), (std::vector<uint8_t>{0x00, 0xff, 0x10}));
  EXPECT_TRUE((*vectors)[0].Bytes("AAD").empty());
  EXPECT_EQ((*vectors)[1].location(), "f.txt:9");
  EXPECT_EQ((*vectors)[1].Number("Count"), 8u);
  EXPECT_TRUE((*vectors)[1].Bytes("Key").empty());
  EXPECT_EQ((*vectors)[1].Bytes("AAD"), (std::vector<uint8_t>{0xab}));
}

struct BadFile {
  const char* text;
  const char* error;  // expected in the message, with the line
};

class VectorFileErrorTest : public ::testing::TestWithParam<BadFile> {};

TEST_P(VectorFileErrorTest, Rejected) {
  auto vectors = ParseTestVectors(GetParam().text, "bad.txt", kSchema);
  ASSERT_FALSE(vectors.ok());
  EXPECT_EQ(vectors.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(vectors.status().message()), HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    All, VectorFileErrorTest,
    ::testing::Values(
        BadFile{"Count = 1\nKey = 00\nAAD =\nTag = 00\n", "bad.txt:4: unknown attribute \"Tag\""},
        BadFile{"Count = 1\nKey = 00\n\nCount = 2\nKey = 00\nAAD =\n",
                "bad.txt:1: block lacks attribute \"AAD\""},
        BadFile{"Count = 1\nKey = 00\nAAD =\n\nCount = 2\nKey = 00\n",
                "bad.txt:5: block lacks attribute \"AAD\""},
        BadFile{"Count = 1\nKey = 00\nKey = 01\nAAD =\n",
                "bad.txt:3: attribute \"Key\" repeated (first on line 2)"},
        BadFile{"Count = 1\nKey = 0\nAAD =\n", "bad.txt:2: attribute \"Key\" is not"},
        BadFile{"Count = 1\nKey = 0g\nAAD =\n", "bad.txt:2: attribute \"Key\" is not"},
        BadFile{"Count = 1\nKey = 00 11\nAAD =\n", "bad.txt:2: attribute \"Key\" is not"},
        BadFile{"Count = x\nKey = 00\nAAD =\n", "bad.txt:1: attribute \"Count\" is not"},
        BadFile{"Count = -1\nKey = 00\nAAD =\n", "bad.txt:1: attribute \"Count\" is not"},
        BadFile{"Count = 1\nKey 00\nAAD =\n", "bad.txt:2: expected \"Name = value\""},
        BadFile{"# only a comment\n\n", "no test vectors"}));

TEST(VectorFileTest, MissingFileIsAnError) {
  auto vectors = ReadTestVectors("crypto/tests/testdata/no_such_file.txt", kSchema);
  EXPECT_FALSE(vectors.ok());
  EXPECT_THAT(std::string(vectors.status().message()), HasSubstr("no_such_file.txt"));
}

}  // namespace
}  // namespace sealbox::crypto::test
