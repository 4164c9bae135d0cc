#include "server/keystore/kek_ring.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

Kek KekOf(uint8_t byte) { return *Kek::FromBytes(std::vector<uint8_t>(kKekBytes, byte)); }

std::shared_ptr<const KekRing> RingOf(uint8_t current, int64_t sealed_revision) {
  return std::make_shared<const KekRing>(KekOf(current), std::vector<Kek>{}, sealed_revision);
}

// "Written under the KEK whose bytes are all `byte`".
std::function<bool(const Kek&)> WrittenWith(uint8_t byte) {
  return [byte](const Kek& kek) { return kek.span()[0] == byte; };
}

// A sealed KEK that another replica has rotated: it answers slowly, as an HSM does,
// and counts how often it is asked.
class RotatedSource : public KekSource {
 public:
  absl::StatusOr<std::shared_ptr<const KekRing>> Current() override {
    asked_.fetch_add(1);
    absl::SleepFor(absl::Milliseconds(200));
    return RingOf(2, 20);
  }
  int asked() const { return asked_.load(); }

 private:
  std::atomic<int> asked_{0};
};

TEST(StoreKeksTest, ReadsThatMissTogetherAllFindTheNewKekWithOneQuestion) {
  RotatedSource source;
  StoreKeks keks(RingOf(1, 10), &source);
  constexpr int kReaders = 8;
  std::atomic<int> found{0};
  absl::Notification go;
  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; ++i) {
    readers.emplace_back([&] {
      go.WaitForNotification();
      if (KekRef kek = keks.For(WrittenWith(2)); kek != nullptr && kek->span()[0] == 2) {
        found.fetch_add(1);
      }
    });
  }
  go.Notify();
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(found.load(), kReaders);
  EXPECT_EQ(source.asked(), 1);
  EXPECT_EQ(keks.ring()->sealed_revision, 20);
}

TEST(StoreKeksTest, AnUnknownKekAsksTheSourceAtMostOnceASecond) {
  RotatedSource source;
  StoreKeks keks(RingOf(1, 10), &source);
  EXPECT_EQ(keks.For(WrittenWith(3)), nullptr);
  EXPECT_EQ(keks.For(WrittenWith(3)), nullptr);
  EXPECT_EQ(source.asked(), 1);
  // What the one question brought is known without asking again.
  EXPECT_NE(keks.For(WrittenWith(2)), nullptr);
  EXPECT_EQ(source.asked(), 1);
}

TEST(StoreKeksTest, ARingFromAnOlderSealedKekIsNotAdopted) {
  StoreKeks keks(RingOf(1, 10), nullptr);
  keks.Set(RingOf(2, 20));
  keks.Set(RingOf(1, 10));  // a slower reader's answer, arriving last
  EXPECT_EQ(keks.ring()->sealed_revision, 20);
  EXPECT_EQ(keks.Current()->span()[0], 2);
  // Given KEKs (no sealed revision) are always adopted.
  keks.Set(RingOf(3, 0));
  EXPECT_EQ(keks.Current()->span()[0], 3);
}

}  // namespace
}  // namespace sealbox::server
