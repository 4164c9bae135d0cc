// The unary format: round trips, the exact header layout, rejection of every change
// to a ciphertext or its context, and the nonce counter's limits.
#include "crypto/format/unary.h"

#include <memory>
#include <set>
#include <string>
#include <thread>

#include "crypto/aes_gcm.h"
#include "crypto/format/output_bytes.h"
#include "crypto/format/test_bytes.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

using test::Bytes;
using test::FromString;
using test::Sequence;

const KeyContext kUnaryContext = {"demo", "default", 1};
const EpochId kEpoch = {0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
                        0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf};

std::unique_ptr<EpochSubkey> Subkey(absl::Span<const uint8_t> material,
                                    const KeyContext& context = kUnaryContext,
                                    const EpochId& epoch = kEpoch) {
  absl::StatusOr<std::unique_ptr<EpochSubkey>> subkey =
      EpochSubkey::Derive(material, context, epoch);
  EXPECT_TRUE(subkey.ok()) << subkey.status();
  return subkey.ok() ? *std::move(subkey) : nullptr;
}

Bytes Nonce(const Bytes& ciphertext) {
  return Bytes(ciphertext.begin() + 21, ciphertext.begin() + 33);
}

TEST(UnaryTest, RoundTrip) {
  for (size_t material_bytes : {16, 32}) {
    auto subkey = Subkey(Sequence(material_bytes));
    for (size_t size : {0, 1, 15, 16, 17, 1000}) {
      const Bytes plaintext = Sequence(size, 7);
      const Bytes aad = FromString("record-42");
      absl::StatusOr<Bytes> sealed = subkey->Seal(plaintext, aad);
      ASSERT_TRUE(sealed.ok()) << sealed.status();
      EXPECT_EQ(sealed->size(), size + kUnaryOverheadBytes);
      absl::StatusOr<Bytes> opened = subkey->Open(*sealed, aad);
      ASSERT_TRUE(opened.ok()) << opened.status();
      EXPECT_EQ(*opened, plaintext);
    }
  }
}

// Seal into a string and OpenInto a buffer of the caller's: the same bytes as the
// vector forms; a failed open leaves the buffer zero, a wrong-size buffer is refused.
TEST(UnaryTest, StringOutputAndOpenInto) {
  auto subkey = Subkey(Sequence(32));
  for (size_t size : {0, 1, 15, 16, 17, 1000}) {
    const Bytes plaintext = Sequence(size, 3);
    const Bytes aad = FromString("record-7");
    absl::StatusOr<std::string> sealed = subkey->Seal<std::string>(plaintext, aad);
    ASSERT_TRUE(sealed.ok()) << sealed.status();
    const Bytes ciphertext(sealed->begin(), sealed->end());
    ASSERT_EQ(ciphertext.size(), size + kUnaryOverheadBytes);
    EXPECT_EQ(OpenedBytes(ciphertext), size);
    Bytes opened(size, 0xee);
    ASSERT_TRUE(subkey->OpenInto(ciphertext, aad, absl::MakeSpan(opened)).ok());
    EXPECT_EQ(opened, plaintext);

    Bytes forged = ciphertext;
    forged.back() ^= 1;
    Bytes out(size, 0xee);
    EXPECT_EQ(subkey->OpenInto(forged, aad, absl::MakeSpan(out)).message(), "decryption failed");
    EXPECT_EQ(out, Bytes(size, 0));
    Bytes wrong_size(size + 1);
    EXPECT_EQ(subkey->OpenInto(ciphertext, aad, absl::MakeSpan(wrong_size)).code(),
              absl::StatusCode::kInternal);
  }
  EXPECT_EQ(OpenedBytes(Bytes(kUnaryOverheadBytes - 1)), 0u);
}

TEST(UnaryTest, HeaderLayout) {
  auto subkey = Subkey(Sequence(32), {"demo", "default", 0x01020304});
  absl::StatusOr<Bytes> sealed = subkey->Seal(FromString("x"), {});
  ASSERT_TRUE(sealed.ok());
  const Bytes& c = *sealed;
  EXPECT_EQ(c[0], kUnaryFormatV1);
  EXPECT_EQ(Bytes(c.begin() + 1, c.begin() + 5), (Bytes{1, 2, 3, 4}));
  EXPECT_EQ(Bytes(c.begin() + 5, c.begin() + 21), Bytes(kEpoch.begin(), kEpoch.end()));
  EXPECT_EQ(Nonce(c), Bytes(12, 0));  // the first message of an epoch: counter 0

  absl::StatusOr<UnaryHeader> header = ParseUnaryHeader(c);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->key_version, 0x01020304u);
  EXPECT_EQ(header->epoch_id, kEpoch);
}

// OutputBytes is not zero-filled, so Seal writes the whole header itself: sealed
// into memory just freed full of 0xaa (which malloc hands back), the same layout
// and the same bytes as a vector sealed with the same counter.
TEST(UnaryTest, OutputBytesGetTheWholeHeaderWritten) {
  for (size_t size : {0, 1, 16, 1000, 65536}) {
    const Bytes plaintext = Sequence(size, 5);
    const Bytes aad = FromString("record-9");
    absl::StatusOr<std::unique_ptr<EpochSubkey>> for_vector =
        EpochSubkey::DeriveForTesting(Sequence(32), kUnaryContext, kEpoch, 7);
    absl::StatusOr<std::unique_ptr<EpochSubkey>> for_output_bytes =
        EpochSubkey::DeriveForTesting(Sequence(32), kUnaryContext, kEpoch, 7);
    ASSERT_TRUE(for_vector.ok() && for_output_bytes.ok());
    absl::StatusOr<Bytes> expected = (*for_vector)->Seal(plaintext, aad);
    ASSERT_TRUE(expected.ok()) << expected.status();

    { OutputBytes dirty(size + kUnaryOverheadBytes, 0xaa); }
    absl::StatusOr<OutputBytes> sealed = (*for_output_bytes)->Seal<OutputBytes>(plaintext, aad);
    ASSERT_TRUE(sealed.ok()) << sealed.status();
    const Bytes got(sealed->begin(), sealed->end());
    EXPECT_EQ(Nonce(got), Nonce(*expected)) << "size " << size;
    EXPECT_EQ(got, *expected) << "size " << size;
  }
}

TEST(UnaryTest, ParseRejectsMalformed) {
  auto subkey = Subkey(Sequence(32));
  Bytes c = *subkey->Seal({}, {});
  EXPECT_TRUE(ParseUnaryHeader(c).ok());
  EXPECT_TRUE(
      IsDecryptionFailure(ParseUnaryHeader(absl::MakeConstSpan(c).first(c.size() - 1)).status()));
  c[0] = 0x02;
  EXPECT_TRUE(IsDecryptionFailure(ParseUnaryHeader(c).status()));
}

TEST(UnaryTest, EveryBitFlipFails) {
  auto subkey = Subkey(Sequence(32));
  const Bytes aad = FromString("aad");
  const Bytes sealed = *subkey->Seal(FromString("twenty bytes of text"), aad);
  for (size_t bit = 0; bit < sealed.size() * 8; ++bit) {
    Bytes changed = sealed;
    changed[bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
    EXPECT_TRUE(IsDecryptionFailure(subkey->Open(changed, aad).status())) << "bit " << bit;
  }
}

TEST(UnaryTest, EveryTruncationFails) {
  auto subkey = Subkey(Sequence(32));
  const Bytes sealed = *subkey->Seal(FromString("some text"), {});
  for (size_t size = 0; size < sealed.size(); ++size) {
    EXPECT_TRUE(
        IsDecryptionFailure(subkey->Open(absl::MakeConstSpan(sealed).first(size), {}).status()))
        << size;
  }
  Bytes longer = sealed;
  longer.push_back(0);
  EXPECT_TRUE(IsDecryptionFailure(subkey->Open(longer, {}).status()));
}

TEST(UnaryTest, WrongContextFails) {
  const Bytes material = Sequence(32);
  const Bytes aad = FromString("record-42");
  auto subkey = Subkey(material);
  const Bytes sealed = *subkey->Seal(FromString("hello"), aad);

  EXPECT_TRUE(IsDecryptionFailure(subkey->Open(sealed, FromString("record-43")).status()));
  EXPECT_TRUE(IsDecryptionFailure(subkey->Open(sealed, {}).status()));

  EpochId other_epoch = kEpoch;
  other_epoch[15] ^= 1;
  const std::unique_ptr<EpochSubkey> others[] = {
      Subkey(material, {"demo2", "default", 1}),
      Subkey(material, {"demo", "default2", 1}),
      // The names are length-prefixed, so moving a byte between them changes the key.
      Subkey(material, {"demod", "efault", 1}),
      Subkey(material, {"demo", "default", 2}),
      Subkey(material, kUnaryContext, other_epoch),
      Subkey(Sequence(32, 1)),
  };
  for (const auto& other : others) {
    EXPECT_TRUE(IsDecryptionFailure(other->Open(sealed, aad).status()));
  }
}

TEST(UnaryTest, CounterGivesDistinctNonces) {
  auto subkey = Subkey(Sequence(32));
  const Bytes first = *subkey->Seal(FromString("same"), {});
  const Bytes second = *subkey->Seal(FromString("same"), {});
  EXPECT_EQ(Nonce(first), Bytes(12, 0));
  EXPECT_EQ(Nonce(second), (Bytes{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_NE(first, second);
}

TEST(UnaryTest, ConcurrentSealsNeverShareANonce) {
  auto subkey = Subkey(Sequence(32));
  constexpr int kThreads = 4, kEach = 500;
  std::vector<std::vector<Bytes>> nonces(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) nonces[t].push_back(Nonce(*subkey->Seal({}, {})));
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<Bytes> distinct;
  for (const auto& list : nonces) distinct.insert(list.begin(), list.end());
  EXPECT_EQ(distinct.size(), size_t{kThreads * kEach});
}

TEST(UnaryTest, EpochLimits) {
  absl::StatusOr<std::unique_ptr<EpochSubkey>> subkey = EpochSubkey::DeriveForTesting(
      Sequence(32), kUnaryContext, kEpoch, kNearlyExhaustedMessages - 1);
  ASSERT_TRUE(subkey.ok());
  EXPECT_FALSE((*subkey)->NearlyExhausted());
  ASSERT_TRUE((*subkey)->Seal({}, {}).ok());
  EXPECT_TRUE((*subkey)->NearlyExhausted());

  subkey =
      EpochSubkey::DeriveForTesting(Sequence(32), kUnaryContext, kEpoch, kMaxMessagesPerEpoch - 1);
  ASSERT_TRUE(subkey.ok());
  absl::StatusOr<Bytes> last = (*subkey)->Seal({}, {});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(Nonce(*last), (Bytes{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}));
  EXPECT_TRUE((*subkey)->Open(*last, {}).ok());
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ((*subkey)->Seal({}, {}).status().code(), absl::StatusCode::kResourceExhausted);
  }
}

TEST(UnaryTest, NewEpochsDiffer) {
  auto a = EpochSubkey::DeriveNewEpoch(Sequence(32), kUnaryContext);
  auto b = EpochSubkey::DeriveNewEpoch(Sequence(32), kUnaryContext);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)->epoch_id(), (*b)->epoch_id());
  EXPECT_EQ((*a)->version(), 1u);
}

TEST(UnaryTest, RejectsBadKeysAndNames) {
  EXPECT_FALSE(EpochSubkey::Derive(Sequence(24), kUnaryContext, kEpoch).ok());
  EXPECT_FALSE(EpochSubkey::Derive(Sequence(0), kUnaryContext, kEpoch).ok());
  const KeyContext long_name = {std::string(256, 't'), "default", 1};
  EXPECT_EQ(EpochSubkey::Derive(Sequence(32), long_name, kEpoch).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(EpochSubkey::Derive(Sequence(32), {std::string(255, 't'), "", 1}, kEpoch).ok());
}

}  // namespace
}  // namespace sealbox::crypto
