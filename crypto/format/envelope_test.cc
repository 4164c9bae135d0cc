// The envelope file (envelope.h): header rules, round trips, and the damage every
// opener must refuse. The segments themselves are stream_test's too.
#include "crypto/format/envelope.h"

#include <random>

#include "crypto/format/test_bytes.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

using test::Bytes;
using test::RandomBytes;
using test::Sequence;

const Bytes kDataKey = Sequence(32, 0x80);
// Stands in for GenerateDataKey's sealed key: the format never looks inside it.
const Bytes kSealedKey = Sequence(81, 0x01);

Bytes Seal(const Bytes& plaintext, const EnvelopeHeader& header, size_t chunk) {
  auto sealer = EnvelopeSealer(kDataKey, header);
  EXPECT_TRUE(sealer.ok());
  Bytes file = header.bytes;
  for (size_t at = 0; at < plaintext.size(); at += chunk) {
    const size_t n = std::min(chunk, plaintext.size() - at);
    EXPECT_TRUE((*sealer)->Update(absl::MakeSpan(plaintext).subspan(at, n), file).ok());
  }
  EXPECT_TRUE((*sealer)->Finish(file).ok());
  return file;
}

// Opens a whole file as a reader would: the fixed header, the rest of the header,
// then the segments in pieces of `chunk` bytes.
absl::StatusOr<Bytes> Open(absl::Span<const uint8_t> file, const Bytes& data_key,
                           size_t chunk = 1000) {
  absl::StatusOr<size_t> header_bytes =
      EnvelopeHeaderBytes(file.first(std::min(file.size(), kEnvelopeFixedHeaderBytes)));
  if (!header_bytes.ok()) return header_bytes.status();
  if (file.size() < *header_bytes) return absl::InvalidArgumentError("short header");
  absl::StatusOr<EnvelopeHeader> header = ParseEnvelopeHeader(file.first(*header_bytes));
  if (!header.ok()) return header.status();
  auto opener = EnvelopeOpener(data_key, *header);
  if (!opener.ok()) return opener.status();
  Bytes plaintext;
  file.remove_prefix(*header_bytes);
  for (size_t at = 0; at < file.size(); at += chunk) {
    absl::Status status =
        (*opener)->Update(file.subspan(at, std::min(chunk, file.size() - at)), plaintext);
    if (!status.ok()) return status;
  }
  absl::Status status = (*opener)->Finish(plaintext);
  if (!status.ok()) return status;
  return plaintext;
}

TEST(EnvelopeTest, HeaderLayout) {
  SegmentNoncePrefix prefix = {1, 2, 3, 4, 5, 6, 7};
  absl::StatusOr<EnvelopeHeader> header = NewEnvelopeHeader(kSealedKey, 0, prefix);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->segment_bytes, kDefaultEnvelopeSegmentBytes);
  ASSERT_EQ(header->bytes.size(), 14 + 81);
  EXPECT_EQ(header->bytes[0], 0x03);
  EXPECT_EQ(Bytes(header->bytes.begin() + 1, header->bytes.begin() + 5),
            (Bytes{0x00, 0x10, 0x00, 0x00}));
  EXPECT_EQ(Bytes(header->bytes.begin() + 5, header->bytes.begin() + 12),
            Bytes(prefix.begin(), prefix.end()));
  EXPECT_EQ(header->bytes[12], 0);
  EXPECT_EQ(header->bytes[13], 81);
  EXPECT_EQ(header->sealed_data_key, kSealedKey);
  EXPECT_EQ(EnvelopeHeaderBytes(header->bytes).value_or(0), 95u);
}

TEST(EnvelopeTest, RefusesBadHeaders) {
  absl::StatusOr<EnvelopeHeader> good = NewEnvelopeHeader(kSealedKey, 4096);
  ASSERT_TRUE(good.ok());
  auto with = [&](size_t at, uint8_t value) {
    Bytes bytes = good->bytes;
    bytes[at] = value;
    return bytes;
  };
  EXPECT_FALSE(EnvelopeHeaderBytes(with(0, 0x02)).ok());   // a stream
  EXPECT_FALSE(EnvelopeHeaderBytes(with(3, 0x30)).ok());   // not a power of two
  EXPECT_FALSE(EnvelopeHeaderBytes(with(1, 0x01)).ok());   // 16 MiB segments
  EXPECT_FALSE(EnvelopeHeaderBytes(with(13, 48)).ok());    // sealed key too short
  EXPECT_FALSE(EnvelopeHeaderBytes(with(12, 0x04)).ok());  // sealed key over 1024
  EXPECT_FALSE(EnvelopeHeaderBytes(absl::MakeSpan(good->bytes).first(13)).ok());
  EXPECT_FALSE(ParseEnvelopeHeader(absl::MakeSpan(good->bytes).first(94)).ok());
  EXPECT_FALSE(NewEnvelopeHeader(Sequence(48), 4096).ok());
  EXPECT_FALSE(NewEnvelopeHeader(kSealedKey, 5000).ok());
}

TEST(EnvelopeTest, RoundTripsEveryShape) {
  std::mt19937_64 rng(7);
  absl::StatusOr<EnvelopeHeader> header = NewEnvelopeHeader(kSealedKey, 4096);
  ASSERT_TRUE(header.ok());
  for (size_t size : {0, 1, 4095, 4096, 4097, 8192, 20000}) {
    const Bytes plaintext = RandomBytes(rng, size);
    for (size_t chunk : {1, 333, 4096, 100000}) {
      const Bytes file = Seal(plaintext, *header, chunk);
      EXPECT_EQ(file.size(), 95 + plaintext.size() + 16 * (plaintext.size() / 4096 + 1));
      absl::StatusOr<Bytes> opened = Open(file, kDataKey, chunk);
      ASSERT_TRUE(opened.ok()) << size << " in " << chunk << ": " << opened.status();
      EXPECT_EQ(*opened, plaintext);
    }
  }
}

TEST(EnvelopeTest, RefusesDamage) {
  std::mt19937_64 rng(8);
  absl::StatusOr<EnvelopeHeader> header = NewEnvelopeHeader(kSealedKey, 4096);
  ASSERT_TRUE(header.ok());
  const Bytes file = Seal(RandomBytes(rng, 10000), *header, 4096);
  const size_t segments_at = header->bytes.size();

  for (size_t at : {size_t{1} + 4, size_t{8}, segments_at, segments_at + 4200, file.size() - 1}) {
    Bytes flipped = file;
    flipped[at] ^= 0x01;
    EXPECT_FALSE(Open(flipped, kDataKey).ok()) << "bit flipped at " << at;
  }
  for (size_t keep : {segments_at, segments_at + 4112, file.size() - 1}) {
    EXPECT_FALSE(Open(absl::MakeSpan(file).first(keep), kDataKey).ok()) << "cut at " << keep;
  }
  Bytes appended = file;
  appended.push_back(0);
  EXPECT_FALSE(Open(appended, kDataKey).ok());
  EXPECT_FALSE(Open(file, Sequence(32, 0x81)).ok());  // another data key
}

// Rewrap replaces the sealed data key alone; the segments still open.
TEST(EnvelopeTest, ANewSealedKeyKeepsTheSegments) {
  std::mt19937_64 rng(9);
  absl::StatusOr<EnvelopeHeader> header = NewEnvelopeHeader(kSealedKey, 4096);
  ASSERT_TRUE(header.ok());
  const Bytes plaintext = RandomBytes(rng, 9000);
  const Bytes file = Seal(plaintext, *header, 4096);

  Bytes rewrapped(file.begin(), file.begin() + 12);
  const Bytes new_sealed_key = Sequence(97, 0x40);  // longer, as after a longer AAD
  rewrapped.push_back(0);
  rewrapped.push_back(97);
  rewrapped.insert(rewrapped.end(), new_sealed_key.begin(), new_sealed_key.end());
  rewrapped.insert(rewrapped.end(), file.begin() + header->bytes.size(), file.end());
  absl::StatusOr<Bytes> opened = Open(rewrapped, kDataKey);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(*opened, plaintext);
}

}  // namespace
}  // namespace sealbox::crypto
