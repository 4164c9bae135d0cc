#include "server/dataplane/stream_wire.h"

#include <random>
#include <string>
#include <vector>

#include "crypto/format/output_bytes.h"
#include "gtest/gtest.h"
#include "server/rpc/flat_byte_buffer.h"

namespace sealbox::server {
namespace {

// `bytes` as gRPC might hold them: cut into slices at `cuts`.
grpc::ByteBuffer Buffer(const std::string& bytes, std::vector<size_t> cuts = {}) {
  std::vector<grpc::Slice> slices;
  size_t at = 0;
  cuts.push_back(bytes.size());
  for (size_t cut : cuts) {
    slices.emplace_back(bytes.data() + at, cut - at);
    at = cut;
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

std::string Joined(const StreamRequestView& view) {
  std::string joined;
  for (absl::Span<const uint8_t> piece : view.pieces) {
    joined.append(reinterpret_cast<const char*>(piece.data()), piece.size());
  }
  return joined;
}

std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

TEST(StreamWireTest, ReadsStart) {
  v1::SealStreamRequest request;
  request.mutable_start()->set_key("payments");
  request.mutable_start()->set_associated_data("order 7");
  request.mutable_start()->set_segment_size(1 << 20);
  absl::StatusOr<StreamRequestView> view = ReadStreamRequest(Buffer(request.SerializeAsString()));
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_TRUE(view->start.has_value());
  EXPECT_EQ(view->start->key(), "payments");
  EXPECT_EQ(view->start->associated_data(), "order 7");
  EXPECT_EQ(view->start->segment_size(), 1u << 20);
  EXPECT_TRUE(view->pieces.empty());
}

TEST(StreamWireTest, ReadsChunkInPlaceAcrossEverySplit) {
  v1::OpenStreamRequest request;
  request.set_ciphertext_chunk(std::string(300, 'c') + "end");
  const std::string bytes = request.SerializeAsString();
  for (size_t a = 0; a <= bytes.size(); ++a) {
    for (size_t b = a; b <= bytes.size(); b += 7) {
      absl::StatusOr<StreamRequestView> view = ReadStreamRequest(Buffer(bytes, {a, b}));
      ASSERT_TRUE(view.ok()) << a << " " << b << ": " << view.status();
      EXPECT_FALSE(view->start.has_value());
      EXPECT_EQ(Joined(*view), request.ciphertext_chunk()) << a << " " << b;
    }
  }
}

TEST(StreamWireTest, EmptyMessageIsAnEmptyChunk) {
  absl::StatusOr<StreamRequestView> view = ReadStreamRequest(Buffer(""));
  ASSERT_TRUE(view.ok());
  EXPECT_FALSE(view->start.has_value());
  EXPECT_TRUE(view->pieces.empty());
}

// Random messages of known and unknown fields in any order, cut anywhere: read as
// protobuf reads them.
TEST(StreamWireTest, AgreesWithProtobuf) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 3000; ++round) {
    std::string bytes;
    const int fields = static_cast<int>(rng() % 6);
    for (int f = 0; f < fields; ++f) {
      switch (rng() % 6) {
        case 0: {  // start
          v1::StreamStart start;
          start.set_key("k" + std::to_string(rng() % 100));
          if (rng() % 2) start.set_segment_size(static_cast<uint32_t>(rng()));
          const std::string s = start.SerializeAsString();
          bytes += '\x0a' + Varint(s.size()) + s;
          break;
        }
        case 1: {  // chunk
          const std::string c(rng() % 40, static_cast<char>(rng()));
          bytes += '\x12' + Varint(c.size()) + c;
          break;
        }
        case 2:  // unknown varint, field 9
          bytes += Varint(9 << 3 | 0) + Varint(rng());
          break;
        case 3:  // unknown fixed64, field 10
          bytes += Varint(10 << 3 | 1) + std::string(8, 'x');
          break;
        case 4:  // unknown fixed32, field 1000
          bytes += Varint(1000 << 3 | 5) + std::string(4, 'y');
          break;
        case 5: {  // unknown bytes, field 3
          const std::string u(rng() % 20, 'u');
          bytes += Varint(3 << 3 | 2) + Varint(u.size()) + u;
          break;
        }
      }
    }
    v1::SealStreamRequest expected;
    ASSERT_TRUE(expected.ParseFromString(bytes));
    std::vector<size_t> cuts;
    for (size_t at = 0; at < bytes.size(); at += 1 + rng() % 9) cuts.push_back(at);
    absl::StatusOr<StreamRequestView> view = ReadStreamRequest(Buffer(bytes, cuts));
    ASSERT_TRUE(view.ok()) << view.status();
    ASSERT_EQ(view->start.has_value(), expected.has_start()) << round;
    if (expected.has_start()) {
      EXPECT_EQ(view->start->SerializeAsString(), expected.start().SerializeAsString());
    } else {
      EXPECT_EQ(Joined(*view), expected.plaintext_chunk()) << round;
    }
  }
}

TEST(StreamWireTest, RefusesMalformedMessages) {
  const std::vector<std::string> malformed = {
      "\x12\x05"
      "abc",                                          // chunk shorter than its length
      "\x12",                                         // length missing
      "\x08",                                         // varint missing
      std::string("\x48") + std::string(11, '\xff'),  // varint over 10 bytes
      "\x49"
      "1234567",                                        // fixed64 cut short
      "\x0b\x0c",                                       // a group
      std::string("\x00\x01", 2),                       // field number 0
      std::string("\x90\x8f\x8f\x8f\x8f\x00\x05", 7),   // a tag in 6 bytes
      std::string("\x90\x80\x80\x80\x10\x05", 6),       // a tag over 32 bits
      std::string("\x12\x81\x80\x80\x80\x80\x00x", 8),  // a length in 6 bytes
      "\x0a\x02\xff\xff",                               // start that does not parse
      "\x0a\x02\xff\xff\x12\x01x",                      // ... even when a chunk follows
  };
  for (const std::string& bytes : malformed) {
    absl::StatusOr<StreamRequestView> view = ReadStreamRequest(Buffer(bytes));
    EXPECT_TRUE(absl::IsInvalidArgument(view.status())) << ::testing::PrintToString(bytes);
  }
}

TEST(StreamWireTest, ResponseIsWhatProtobufWrites) {
  for (uint32_t version : {0u, 1u, 300u, 0xffffffffu}) {
    for (size_t size : {size_t{0}, size_t{1}, size_t{127}, size_t{128}, size_t{70000}}) {
      const std::string output(size, 'o');
      v1::OpenStreamResponse expected;
      expected.set_plaintext_chunk(output);
      expected.set_key_version(version);
      EXPECT_EQ(
          FlatByteBuffer(StreamResponse(crypto::OutputBytes(output.begin(), output.end()), version,
                                        /*secret=*/true)),
          expected.SerializeAsString())
          << version << " " << size;
    }
  }
}

}  // namespace
}  // namespace sealbox::server
