// The stream format: round trips over chunkings, and rejection of truncation,
// reordering, splicing, trailing data, bit flips, a wrong context and bad headers.
#include "crypto/format/stream.h"

#include <algorithm>
#include <random>
#include <string>

#include "crypto/aes_gcm.h"
#include "crypto/format/output_bytes.h"
#include "crypto/format/test_bytes.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

using test::Bytes;
using test::FromString;
using test::RandomBytes;
using test::Sequence;

constexpr size_t S = kMinSegmentBytes;
constexpr size_t kSealedSegment = S + 16;
const KeyContext kStreamContext = {"demo", "default", 3};
const Bytes kStreamMaterial = Sequence(32);
const Bytes kStreamAad = FromString("record-42");

// Splits `data` into chunks of random sizes from 1 to `max_chunk`.
std::vector<absl::Span<const uint8_t>> Chunks(absl::Span<const uint8_t> data, std::mt19937_64& rng,
                                              size_t max_chunk) {
  std::vector<absl::Span<const uint8_t>> chunks;
  while (!data.empty()) {
    size_t n = std::min<size_t>(data.size(), 1 + rng() % max_chunk);
    chunks.push_back(data.first(n));
    data.remove_prefix(n);
  }
  return chunks;
}

Bytes Seal(absl::Span<const uint8_t> plaintext, std::mt19937_64& rng,
           const Bytes& material = kStreamMaterial, const Bytes& aad = kStreamAad) {
  auto sealer = StreamSealer::Create(material, kStreamContext, aad, S);
  EXPECT_TRUE(sealer.ok()) << sealer.status();
  Bytes out;
  for (auto chunk : Chunks(plaintext, rng, 3 * S)) {
    EXPECT_TRUE((*sealer)->Update(chunk, out).ok());
  }
  EXPECT_TRUE((*sealer)->Finish(out).ok());
  return out;
}

struct Opened {
  absl::Status status;
  Bytes plaintext;
};

// Opens `ciphertext` fed in random chunks, stopping at the first error.
Opened Open(absl::Span<const uint8_t> ciphertext, std::mt19937_64& rng,
            const std::string& tenant = kStreamContext.tenant,
            const std::string& key_name = kStreamContext.key_name, const Bytes& aad = kStreamAad,
            const Bytes& material = kStreamMaterial) {
  // Every version has the same material here, so a changed version in the header
  // is caught by authentication, not by the lookup.
  auto opener = StreamOpener::Create(tenant, key_name, aad, [&](uint32_t) {
    return absl::StatusOr<SecretBytes>(SecretBytes(material));
  });
  Opened opened;
  for (auto chunk : Chunks(ciphertext, rng, 3 * S)) {
    opened.status = opener->Update(chunk, opened.plaintext);
    if (!opened.status.ok()) return opened;
  }
  opened.status = opener->Finish(opened.plaintext);
  return opened;
}

// The sealed segments of a stream, header stripped.
std::vector<Bytes> Segments(const Bytes& ciphertext) {
  std::vector<Bytes> segments;
  for (size_t at = kStreamHeaderBytes; at < ciphertext.size(); at += kSealedSegment) {
    const size_t end = std::min(ciphertext.size(), at + kSealedSegment);
    segments.emplace_back(ciphertext.begin() + at, ciphertext.begin() + end);
  }
  return segments;
}

Bytes Join(const Bytes& header, const std::vector<Bytes>& segments) {
  Bytes out(header.begin(), header.begin() + kStreamHeaderBytes);
  for (const Bytes& s : segments) out.insert(out.end(), s.begin(), s.end());
  return out;
}

void ExpectFails(const Bytes& ciphertext, std::mt19937_64& rng, const char* what) {
  Opened opened = Open(ciphertext, rng);
  EXPECT_TRUE(IsDecryptionFailure(opened.status)) << what << ": " << opened.status;
}

TEST(StreamTest, RoundTripInRandomChunks) {
  std::mt19937_64 rng(1);
  for (size_t size : {size_t{0}, size_t{1}, S - 1, S, S + 1, 3 * S, size_t(rng() % (5 * S))}) {
    for (int trial = 0; trial < 3; ++trial) {
      const Bytes plaintext = RandomBytes(rng, size);
      const Bytes sealed = Seal(plaintext, rng);
      // Every segment but a last one shorter than S is full: one encoding per length.
      EXPECT_EQ(sealed.size(), kStreamHeaderBytes + (size / S) * kSealedSegment + size % S + 16);
      Opened opened = Open(sealed, rng);
      ASSERT_TRUE(opened.status.ok()) << size << ": " << opened.status;
      EXPECT_EQ(opened.plaintext, plaintext) << size;
    }
  }
}

TEST(StreamTest, HeaderLayout) {
  std::mt19937_64 rng(2);
  const Bytes sealed = Seal(Sequence(10), rng);
  EXPECT_EQ(sealed[0], kStreamFormatV1);
  EXPECT_EQ(Bytes(sealed.begin() + 1, sealed.begin() + 9), (Bytes{0, 0, 0, 3, 0, 0, 0x10, 0}));
  absl::StatusOr<StreamHeader> header = ParseStreamHeader(sealed);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->key_version, 3u);
  EXPECT_EQ(header->segment_bytes, S);
  // Fresh salt and nonce prefix every time.
  const Bytes again = Seal(Sequence(10), rng);
  EXPECT_NE(Bytes(sealed.begin() + 9, sealed.begin() + 48),
            Bytes(again.begin() + 9, again.begin() + 48));
}

TEST(StreamTest, TruncationFails) {
  std::mt19937_64 rng(3);
  for (size_t size : {size_t{0}, S, 3 * S + 5}) {
    const Bytes sealed = Seal(Sequence(size), rng);
    // Inside the header, at every segment boundary, and one byte short.
    std::vector<size_t> cuts = {0, 1, kStreamHeaderBytes - 1, sealed.size() - 1};
    for (size_t at = kStreamHeaderBytes; at < sealed.size(); at += kSealedSegment) {
      cuts.push_back(at);
    }
    for (size_t cut : cuts) {
      ExpectFails(Bytes(sealed.begin(), sealed.begin() + cut), rng, "truncated");
    }
  }
}

TEST(StreamTest, DroppingTheLastSegmentFails) {
  std::mt19937_64 rng(4);
  for (size_t size : {S, 2 * S, 2 * S + 1}) {
    const Bytes sealed = Seal(Sequence(size), rng);
    std::vector<Bytes> segments = Segments(sealed);
    segments.pop_back();
    ExpectFails(Join(sealed, segments), rng, "last segment dropped");
  }
}

TEST(StreamTest, ReorderingFails) {
  std::mt19937_64 rng(5);
  const Bytes sealed = Seal(RandomBytes(rng, 3 * S + 5), rng);
  std::vector<Bytes> segments = Segments(sealed);
  ASSERT_EQ(segments.size(), 4u);
  std::swap(segments[0], segments[1]);
  ExpectFails(Join(sealed, segments), rng, "segments 0 and 1 swapped");
  segments = Segments(sealed);
  std::swap(segments[2], segments[3]);  // the last moved forward
  ExpectFails(Join(sealed, segments), rng, "segments 2 and 3 swapped");
}

TEST(StreamTest, SplicingFromAnotherStreamFails) {
  std::mt19937_64 rng(6);
  const Bytes plaintext = RandomBytes(rng, 3 * S + 5);
  const Bytes a = Seal(plaintext, rng);
  const Bytes b = Seal(plaintext, rng);  // same key, plaintext and AAD
  for (size_t i = 0; i < 4; ++i) {
    std::vector<Bytes> segments = Segments(a);
    segments[i] = Segments(b)[i];
    ExpectFails(Join(a, segments), rng, "segment from another stream");
  }
  ExpectFails(Join(b, Segments(a)), rng, "another stream's header");
}

TEST(StreamTest, TrailingDataFails) {
  std::mt19937_64 rng(7);
  for (size_t size : {size_t{0}, S - 1, S}) {
    const Bytes sealed = Seal(Sequence(size), rng);
    const Bytes last = Segments(sealed).back();
    for (const Bytes& extra :
         {Bytes(1, 0), Bytes(16, 0), Bytes(kSealedSegment, 0), RandomBytes(rng, 3 * S), last}) {
      Bytes longer = sealed;
      longer.insert(longer.end(), extra.begin(), extra.end());
      ExpectFails(longer, rng, "data after the last segment");
    }
  }
}

TEST(StreamTest, EveryByteChangeFails) {
  std::mt19937_64 rng(8);
  const Bytes sealed = Seal(RandomBytes(rng, S + 10), rng);
  for (size_t i = 0; i < sealed.size(); ++i) {
    Bytes changed = sealed;
    changed[i] ^= static_cast<uint8_t>(1 << (i % 8));
    Opened opened = Open(changed, rng);
    ASSERT_TRUE(IsDecryptionFailure(opened.status)) << "byte " << i;
    // Nothing past the first segment before the change was released.
    if (i >= kStreamHeaderBytes) {
      EXPECT_LE(opened.plaintext.size(), (i - kStreamHeaderBytes) / kSealedSegment * S);
    } else {
      EXPECT_TRUE(opened.plaintext.empty());
    }
  }
  for (size_t bit = 0; bit < kStreamHeaderBytes * 8; ++bit) {
    Bytes changed = sealed;
    changed[bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
    ExpectFails(changed, rng, "header bit flipped");
  }
}

TEST(StreamTest, WrongContextFails) {
  std::mt19937_64 rng(9);
  const Bytes sealed = Seal(Sequence(100), rng);
  EXPECT_TRUE(Open(sealed, rng).status.ok());
  EXPECT_TRUE(
      IsDecryptionFailure(Open(sealed, rng, "demo", "default", FromString("record-43")).status));
  EXPECT_TRUE(IsDecryptionFailure(Open(sealed, rng, "demo", "default", {}).status));
  EXPECT_TRUE(IsDecryptionFailure(Open(sealed, rng, "demo2", "default").status));
  EXPECT_TRUE(IsDecryptionFailure(Open(sealed, rng, "demo", "default2").status));
  EXPECT_TRUE(IsDecryptionFailure(
      Open(sealed, rng, "demo", "default", kStreamAad, Sequence(32, 1)).status));
}

TEST(StreamTest, SealerRejectsBadSegmentSizes) {
  for (uint32_t size : {1u, 2048u, 4095u, 4097u, 6144u, 8u << 20, 0xffffffffu}) {
    EXPECT_EQ(StreamSealer::Create(kStreamMaterial, kStreamContext, {}, size).status().code(),
              absl::StatusCode::kInvalidArgument)
        << size;
  }
  for (uint32_t size : {0u, 4096u, 65536u, 4u << 20}) {
    EXPECT_TRUE(StreamSealer::Create(kStreamMaterial, kStreamContext, {}, size).ok()) << size;
  }
}

TEST(StreamTest, OpenerRejectsBadSegmentSizes) {
  std::mt19937_64 rng(10);
  const Bytes sealed = Seal(Sequence(100), rng);
  for (uint32_t size : {0u, 1u, 2048u, 4097u, 8u << 20, 0x80000000u}) {
    Bytes changed = sealed;
    for (int i = 0; i < 4; ++i) {
      changed[5 + i] = static_cast<uint8_t>(size >> (24 - 8 * i));
    }
    EXPECT_TRUE(IsDecryptionFailure(ParseStreamHeader(changed).status())) << size;
    ExpectFails(changed, rng, "bad segment size");
  }
}

TEST(StreamTest, LookupErrorsPassThrough) {
  std::mt19937_64 rng(11);
  const Bytes sealed = Seal(Sequence(100), rng);
  auto opener = StreamOpener::Create("demo", "default", kStreamAad, [](uint32_t) {
    return absl::StatusOr<SecretBytes>(absl::FailedPreconditionError("disabled"));
  });
  Bytes out;
  EXPECT_EQ(opener->Update(sealed, out).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(opener->key_version(), 3u);
  EXPECT_EQ(opener->Finish(out).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(StreamTest, NothingAfterFinish) {
  std::mt19937_64 rng(12);
  const Bytes sealed = Seal(Sequence(100), rng);
  auto opener = StreamOpener::Create("demo", "default", kStreamAad, [](uint32_t) {
    return absl::StatusOr<SecretBytes>(SecretBytes(kStreamMaterial));
  });
  Bytes out;
  EXPECT_EQ(opener->key_version(), 0u);
  ASSERT_TRUE(opener->Update(sealed, out).ok());
  ASSERT_TRUE(opener->Finish(out).ok());
  EXPECT_EQ(out, Sequence(100));
  EXPECT_TRUE(IsDecryptionFailure(opener->Update(Bytes(1), out)));
  EXPECT_TRUE(IsDecryptionFailure(opener->Finish(out)));

  auto sealer = StreamSealer::Create(kStreamMaterial, kStreamContext, kStreamAad, S);
  ASSERT_TRUE((*sealer)->Finish(out).ok());
  EXPECT_EQ((*sealer)->Update(Bytes(1), out).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*sealer)->Finish(out).code(), absl::StatusCode::kFailedPrecondition);
}

// Sealing and opening write the same bytes into every kind of output, across
// chunkings that leave segments part-filled and outputs that must grow.
template <typename Output>
Bytes SealInto(absl::Span<const uint8_t> plaintext, size_t chunk_bytes) {
  const StreamSalt salt{1, 2, 3};
  const StreamNoncePrefix prefix{4, 5, 6};
  auto sealer =
      StreamSealer::CreateForTesting(kStreamMaterial, kStreamContext, kStreamAad, S, salt, prefix);
  EXPECT_TRUE(sealer.ok()) << sealer.status();
  Output out;
  for (size_t at = 0; at < plaintext.size(); at += chunk_bytes) {
    EXPECT_TRUE((*sealer)->Update(plaintext.subspan(at, chunk_bytes), out).ok());
  }
  EXPECT_TRUE((*sealer)->Finish(out).ok());
  return Bytes(out.begin(), out.end());
}

template <typename Output>
Bytes OpenInto(absl::Span<const uint8_t> sealed, size_t chunk_bytes) {
  auto opener = StreamOpener::Create(
      kStreamContext.tenant, kStreamContext.key_name, kStreamAad,
      [](uint32_t) { return absl::StatusOr<SecretBytes>(SecretBytes(kStreamMaterial)); });
  Output out;
  for (size_t at = 0; at < sealed.size(); at += chunk_bytes) {
    EXPECT_TRUE(opener->Update(sealed.subspan(at, chunk_bytes), out).ok());
  }
  EXPECT_TRUE(opener->Finish(out).ok());
  return Bytes(out.begin(), out.end());
}

TEST(StreamTest, EveryOutputTypeHoldsTheSameBytes) {
  std::mt19937_64 rng(14);
  const Bytes plaintext = RandomBytes(rng, 5 * S + 7);
  for (size_t chunk : {size_t{1000}, S, 3 * S + 1}) {
    const Bytes sealed = SealInto<Bytes>(plaintext, chunk);
    EXPECT_EQ(SealInto<std::string>(plaintext, chunk), sealed) << chunk;
    EXPECT_EQ(SealInto<OutputBytes>(plaintext, chunk), sealed) << chunk;
    EXPECT_EQ(OpenInto<Bytes>(sealed, chunk), plaintext) << chunk;
    EXPECT_EQ(OpenInto<std::string>(sealed, chunk), plaintext) << chunk;
    EXPECT_EQ(OpenInto<OutputBytes>(sealed, chunk), plaintext) << chunk;
  }
}

TEST(StreamTest, Aes128Material) {
  std::mt19937_64 rng(13);
  const Bytes material = Sequence(16);
  const Bytes plaintext = RandomBytes(rng, 2 * S + 3);
  Opened opened =
      Open(Seal(plaintext, rng, material), rng, "demo", "default", kStreamAad, material);
  ASSERT_TRUE(opened.status.ok()) << opened.status;
  EXPECT_EQ(opened.plaintext, plaintext);
  EXPECT_FALSE(StreamSealer::Create(Sequence(24), kStreamContext, {}, S).ok());
}

}  // namespace
}  // namespace sealbox::crypto
