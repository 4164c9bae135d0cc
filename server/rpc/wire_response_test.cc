#include "server/rpc/wire_response.h"

#include <string>
#include <vector>

#include "crypto/format/output_bytes.h"
#include "gtest/gtest.h"
#include "sealbox/v1/data.pb.h"
#include "server/rpc/flat_byte_buffer.h"

namespace sealbox::server {
namespace {

// The wire form is byte for byte what protobuf writes for the whole message, for
// outputs around every varint length boundary and with the small fields set or not.
TEST(ResponseAroundBytes, IsProtobufsOwnEncoding) {
  for (size_t size : {0, 1, 15, 16, 63, 64, 127, 128, 16383, 16384, 65536, 2097152}) {
    for (bool with_fields : {false, true}) {
      v1::SealResponse expected;
      expected.set_ciphertext(std::string(size, 'c'));
      v1::SealResponse rest;
      if (with_fields) {
        rest.set_key_version(300);
        rest.set_ciphertext_crc32c(0xdeadbeef);
        rest.set_verified_associated_data_crc32c(true);
      }
      expected.MergeFrom(rest);
      const grpc::ByteBuffer wire =
          ResponseAroundBytes(1, crypto::OutputBytes(size, 'c'), /*secret=*/false, rest);
      EXPECT_EQ(FlatByteBuffer(wire), expected.SerializeAsString()) << size << " " << with_fields;
      EXPECT_EQ(wire.Length(), expected.ByteSizeLong());
    }
  }
}

TEST(ResponseAroundBytes, AnyFieldNumberParses) {
  v1::OpenResponse rest;
  rest.set_key_version(7);
  const std::string opened = "opened";
  const grpc::ByteBuffer wire = ResponseAroundBytes(
      1, crypto::OutputBytes(opened.begin(), opened.end()), /*secret=*/true, rest);
  v1::OpenResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(FlatByteBuffer(wire)));
  EXPECT_EQ(parsed.plaintext(), "opened");
  EXPECT_EQ(parsed.key_version(), 7u);
}

// The output's buffer itself becomes the slice, whatever its size: no copy.
TEST(ResponseAroundBytes, TakesTheOutputsBuffer) {
  for (size_t size : {0, 1, 127, 128, 65536, 1 << 20}) {
    crypto::OutputBytes output(size, 'x');
    const uint8_t* buffer = output.data();
    v1::OpenStreamResponse rest;
    rest.set_key_version(9);
    const grpc::ByteBuffer wire = ResponseAroundBytes(1, std::move(output), /*secret=*/true, rest);
    v1::OpenStreamResponse expected = rest;
    expected.set_plaintext_chunk(std::string(size, 'x'));
    EXPECT_EQ(FlatByteBuffer(wire), expected.SerializeAsString()) << size;
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(wire.Dump(&slices).ok());
    if (size > 0) {
      ASSERT_EQ(slices.size(), 3u) << size;  // tag and length, the output, the rest
      EXPECT_EQ(slices[1].begin(), buffer) << size;
    }
  }
}

}  // namespace
}  // namespace sealbox::server
