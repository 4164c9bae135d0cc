#include "crypto/format/epochs.h"

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace sealbox::crypto {
namespace {

std::shared_ptr<const SecretBytes> Material() {
  auto material = std::make_shared<SecretBytes>(32);
  for (size_t i = 0; i < material->size(); ++i) material->data()[i] = static_cast<uint8_t>(i);
  return material;
}

TEST(SealingEpochTest, DerivedOnFirstUseAndThenStable) {
  SealingEpoch sealing(Material(), {"acme", "default", 7});
  EXPECT_EQ(sealing.version(), 7u);
  auto first = sealing.Current();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)->version(), 7u);
  EXPECT_EQ(*sealing.Current(), *first);
  EXPECT_EQ(sealing.CurrentIf((*first)->epoch_id()), *first);
  EpochId other = (*first)->epoch_id();
  other[0] ^= 1;
  EXPECT_EQ(sealing.CurrentIf(other), nullptr);
}

TEST(SealingEpochTest, NothingIsDerivedBeforeUse) {
  SealingEpoch sealing(Material(), {"acme", "default", 1});
  EXPECT_EQ(sealing.CurrentIf(EpochId{}), nullptr);
}

TEST(SealingEpochTest, ANearlyExhaustedEpochIsReplaced) {
  SealingEpoch sealing(Material(), {"acme", "default", 1});
  sealing.StartCountersAtForTesting(kNearlyExhaustedMessages - 2);
  auto epoch = sealing.Current();
  ASSERT_TRUE(epoch.ok());
  std::shared_ptr<EpochSubkey> first = *epoch;
  const std::vector<uint8_t> plaintext = {1, 2, 3};
  ASSERT_TRUE(first->Seal(plaintext, {}).ok());
  ASSERT_TRUE(first->Seal(plaintext, {}).ok());
  ASSERT_TRUE(first->NearlyExhausted());
  auto next = sealing.Current();
  ASSERT_TRUE(next.ok());
  EXPECT_NE(*next, first);
  EXPECT_NE((*next)->epoch_id(), first->epoch_id());
  // The replaced epoch stays valid for sealers that still hold it.
  EXPECT_TRUE(first->Seal(plaintext, {}).ok());
}

TEST(SealingEpochTest, ConcurrentFirstUseDerivesOneEpoch) {
  SealingEpoch sealing(Material(), {"acme", "default", 1});
  std::vector<std::shared_ptr<EpochSubkey>> seen(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = *sealing.Current(); });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(std::set<std::shared_ptr<EpochSubkey>>(seen.begin(), seen.end()).size(), 1u);
}

TEST(SealingEpochTest, AnEpochIdleForAWholePeriodIsDropped) {
  SealingEpoch sealing(Material(), {"acme", "default", 1});
  EXPECT_FALSE(sealing.DropIfIdle());  // nothing derived, nothing to drop
  std::shared_ptr<EpochSubkey> first = *sealing.Current();
  EXPECT_TRUE(sealing.warm());
  // Used since the last sweep (there was none): kept, and marked unused.
  EXPECT_FALSE(sealing.DropIfIdle());
  EXPECT_TRUE(sealing.warm());
  // Unused for a whole period: dropped.
  EXPECT_TRUE(sealing.DropIfIdle());
  EXPECT_FALSE(sealing.warm());
  EXPECT_EQ(sealing.CurrentIf(first->epoch_id()), nullptr);
  EXPECT_FALSE(sealing.DropIfIdle());

  // The next Seal derives a new epoch; the dropped one still serves its holder,
  // and what each sealed opens with the epoch named in its header.
  std::shared_ptr<EpochSubkey> next = *sealing.Current();
  EXPECT_TRUE(sealing.warm());
  EXPECT_NE(next->epoch_id(), first->epoch_id());
  const std::vector<uint8_t> plaintext = {7, 8, 9};
  absl::StatusOr<std::vector<uint8_t>> old_sealed = first->Seal(plaintext, {});
  absl::StatusOr<std::vector<uint8_t>> new_sealed = next->Seal(plaintext, {});
  ASSERT_TRUE(old_sealed.ok() && new_sealed.ok());
  EXPECT_EQ(*first->Open(*old_sealed, {}), plaintext);
  EXPECT_EQ(*next->Open(*new_sealed, {}), plaintext);
  EXPECT_FALSE(next->Open(*old_sealed, {}).ok());
}

TEST(SealingEpochTest, SealingOrOpeningWithItKeepsAnEpoch) {
  SealingEpoch sealing(Material(), {"acme", "default", 1});
  const EpochId id = (*sealing.Current())->epoch_id();
  for (int period = 0; period < 3; ++period) {
    ASSERT_TRUE(sealing.Current().ok());
    EXPECT_FALSE(sealing.DropIfIdle());
  }
  for (int period = 0; period < 3; ++period) {
    EXPECT_NE(sealing.CurrentIf(id), nullptr);
    EXPECT_FALSE(sealing.DropIfIdle());
  }
  EXPECT_EQ((*sealing.Current())->epoch_id(), id);
}

TEST(SealingEpochTest, DropsRaceSealsSafely) {
  SealingEpoch sealing(Material(), {"acme", "default", 1});
  std::atomic<bool> stop{false};
  std::thread sweeper([&] {
    while (!stop.load()) sealing.DropIfIdle();
  });
  const std::vector<uint8_t> plaintext = {1, 2, 3};
  for (int i = 0; i < 2000; ++i) {
    absl::StatusOr<std::shared_ptr<EpochSubkey>> epoch = sealing.Current();
    ASSERT_TRUE(epoch.ok());
    absl::StatusOr<std::vector<uint8_t>> sealed = (*epoch)->Seal(plaintext, {});
    ASSERT_TRUE(sealed.ok());
    ASSERT_EQ(*(*epoch)->Open(*sealed, {}), plaintext);
  }
  stop = true;
  sweeper.join();
}

TEST(EpochCacheTest, DerivesOnceAndOpensWhatTheEpochSealed) {
  std::shared_ptr<const SecretBytes> material = Material();
  SealingEpoch sealing(material, {"acme", "default", 3});
  std::shared_ptr<EpochSubkey> sealer = *sealing.Current();
  const std::vector<uint8_t> plaintext = {4, 5, 6};
  absl::StatusOr<std::vector<uint8_t>> sealed = sealer->Seal(plaintext, {});
  ASSERT_TRUE(sealed.ok());

  EpochCache cache(/*capacity=*/4);
  auto first = cache.Get(material->span(), {"acme", "default", 3}, sealer->epoch_id());
  ASSERT_TRUE(first.ok());
  auto again = cache.Get(material->span(), {"acme", "default", 3}, sealer->epoch_id());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(first->get(), again->get());
  absl::StatusOr<std::vector<uint8_t>> opened = (*first)->Open(*sealed, {});
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(*opened, plaintext);
}

TEST(EpochCacheTest, KeepsAtMostItsCapacityDroppingTheOldest) {
  std::shared_ptr<const SecretBytes> material = Material();
  EpochCache cache(/*capacity=*/2);
  const KeyContext context{"acme", "default", 1};
  EpochId a{}, b{}, c{};
  b[0] = 1;
  c[0] = 2;
  // Held here, so a later derivation cannot reuse their addresses.
  std::shared_ptr<const EpochSubkey> first_a = *cache.Get(material->span(), context, a);
  std::shared_ptr<const EpochSubkey> first_b = *cache.Get(material->span(), context, b);
  ASSERT_TRUE(cache.Get(material->span(), context, c).ok());  // drops a
  EXPECT_EQ(cache.Get(material->span(), context, b)->get(), first_b.get());
  EXPECT_NE(cache.Get(material->span(), context, a)->get(), first_a.get());
}

TEST(EpochCacheTest, TheContextIsPartOfTheKey) {
  std::shared_ptr<const SecretBytes> material = Material();
  EpochCache cache(/*capacity=*/4);
  const EpochId epoch{};
  auto acme = cache.Get(material->span(), {"acme", "default", 1}, epoch);
  auto other = cache.Get(material->span(), {"other", "default", 1}, epoch);
  ASSERT_TRUE(acme.ok() && other.ok());
  EXPECT_NE(acme->get(), other->get());
}

std::shared_ptr<const SecretBytes> OtherMaterial() {
  auto material = std::make_shared<SecretBytes>(32);
  for (size_t i = 0; i < material->size(); ++i) material->data()[i] = static_cast<uint8_t>(99 - i);
  return material;
}

TEST(EpochsTest, ASealingEpochIsHandedOnOnlyForTheSameVersionAndMaterial) {
  Epochs epochs;
  std::shared_ptr<SealingEpoch> first = epochs.ForSealing({"acme", "k", 1}, Material(), nullptr);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->version(), 1u);
  // Equal material in another buffer: the same key, unchanged.
  EXPECT_EQ(epochs.ForSealing({"acme", "k", 1}, Material(), first), first);
  // A rotation: a new version.
  std::shared_ptr<SealingEpoch> rotated = epochs.ForSealing({"acme", "k", 2}, Material(), first);
  EXPECT_NE(rotated, first);
  EXPECT_EQ(rotated->version(), 2u);
  // The key made again under the same name: version 1 again, other material.
  std::shared_ptr<SealingEpoch> remade =
      epochs.ForSealing({"acme", "k", 1}, OtherMaterial(), first);
  EXPECT_NE(remade, first);
  EXPECT_EQ(remade->material().span()[0], 99);
}

TEST(EpochsTest, OpeningUsesTheSealingEpochWhileCurrentAndTheCacheOtherwise) {
  Epochs epochs(Epochs::Limits{/*max_cached=*/4});
  std::shared_ptr<const SecretBytes> material = Material();
  const KeyContext context{"acme", "k", 1};
  std::shared_ptr<SealingEpoch> sealing = epochs.ForSealing(context, material, nullptr);
  std::shared_ptr<EpochSubkey> own = *sealing->Current();
  auto opener = epochs.ForOpening(sealing.get(), material->span(), context, own->epoch_id());
  ASSERT_TRUE(opener.ok());
  EXPECT_EQ(opener->get(), own.get());

  // Another replica's epoch of the same version: derived once, then kept.
  std::unique_ptr<EpochSubkey> theirs = *EpochSubkey::DeriveNewEpoch(material->span(), context);
  const std::vector<uint8_t> plaintext = {7, 8, 9};
  absl::StatusOr<std::vector<uint8_t>> sealed = theirs->Seal(plaintext, {});
  ASSERT_TRUE(sealed.ok());
  auto cached = epochs.ForOpening(sealing.get(), material->span(), context, theirs->epoch_id());
  ASSERT_TRUE(cached.ok());
  EXPECT_NE(cached->get(), own.get());
  EXPECT_EQ(*(*cached)->Open(*sealed, {}), plaintext);
  EXPECT_EQ(epochs.ForOpening(nullptr, material->span(), context, theirs->epoch_id())->get(),
            cached->get());
  // An older version's epoch never comes from the newer version's sealing epoch.
  auto older =
      epochs.ForOpening(sealing.get(), material->span(), {"acme", "k", 0}, own->epoch_id());
  ASSERT_TRUE(older.ok());
  EXPECT_NE(older->get(), own.get());
}

TEST(EpochsTest, TheCacheKeepsAtMostItsLimit) {
  Epochs epochs(Epochs::Limits{/*max_cached=*/1});
  std::shared_ptr<const SecretBytes> material = Material();
  const KeyContext context{"acme", "k", 1};
  EpochId a{}, b{};
  b[0] = 1;
  std::shared_ptr<const EpochSubkey> first_a =
      *epochs.ForOpening(nullptr, material->span(), context, a);
  EXPECT_EQ(epochs.ForOpening(nullptr, material->span(), context, a)->get(), first_a.get());
  ASSERT_TRUE(epochs.ForOpening(nullptr, material->span(), context, b).ok());  // drops a
  EXPECT_NE(epochs.ForOpening(nullptr, material->span(), context, a)->get(), first_a.get());
}

TEST(EpochsTest, DropIdleSweepsEveryEpochHandedOutAndStillHeld) {
  Epochs epochs;
  auto busy = epochs.ForSealing({"acme", "busy", 1}, Material(), nullptr);
  auto idle = epochs.ForSealing({"acme", "idle", 1}, Material(), nullptr);
  auto cold = epochs.ForSealing({"acme", "cold", 1}, Material(), nullptr);
  auto released = epochs.ForSealing({"acme", "gone", 1}, Material(), nullptr);
  ASSERT_TRUE(released->Current().ok());
  released.reset();  // no snapshot holds it: nothing to sweep
  ASSERT_TRUE(busy->Current().ok());
  ASSERT_TRUE(idle->Current().ok());
  EXPECT_EQ(epochs.DropIdle(), 0u);  // both used in this period
  ASSERT_TRUE(busy->Current().ok());
  EXPECT_EQ(epochs.DropIdle(), 1u);  // "idle" was not
  EXPECT_TRUE(busy->warm());
  EXPECT_FALSE(idle->warm());
  EXPECT_FALSE(cold->warm());
}

TEST(EpochsTest, EpochsNoLongerHeldAreForgottenEvenWithoutSweeps) {
  Epochs epochs;  // no sweeper
  std::shared_ptr<SealingEpoch> held = epochs.ForSealing({"acme", "k", 1}, Material(), nullptr);
  std::weak_ptr<SealingEpoch> first_released;
  for (uint32_t version = 2; version < 10000; ++version) {
    // A key rotated again and again: each epoch is released by the next.
    auto sealing = epochs.ForSealing({"acme", "rotated", version}, Material(), nullptr);
    if (version == 2) first_released = sealing;
  }
  EXPECT_TRUE(first_released.expired());
  // Pruned as it grew: a few dozen at most, not 10,000.
  EXPECT_LE(epochs.TrackedForTesting(), 130u);
  ASSERT_TRUE(held->Current().ok());
  EXPECT_EQ(epochs.DropIdle(), 0u);
  EXPECT_EQ(epochs.DropIdle(), 1u);  // only `held` was left to sweep
}

TEST(EpochsTest, ItsOwnThreadSweepsAtTheGivenPeriod) {
  Epochs epochs(Epochs::Limits{/*max_cached=*/4, /*idle_sweep=*/absl::Milliseconds(10)});
  auto sealing = epochs.ForSealing({"acme", "k", 1}, Material(), nullptr);
  ASSERT_TRUE(sealing->Current().ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (sealing->warm() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_FALSE(sealing->warm()) << "not dropped within 10 s of 10 ms sweeps";
}

}  // namespace
}  // namespace sealbox::crypto
