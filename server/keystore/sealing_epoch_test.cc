#include "server/keystore/sealing_epoch.h"

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

std::shared_ptr<const crypto::SecretBytes> Material() {
  auto material = std::make_shared<crypto::SecretBytes>(32);
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
  crypto::EpochId other = (*first)->epoch_id();
  other[0] ^= 1;
  EXPECT_EQ(sealing.CurrentIf(other), nullptr);
}

TEST(SealingEpochTest, NothingIsDerivedBeforeUse) {
  SealingEpoch sealing(Material(), {"acme", "default", 1});
  EXPECT_EQ(sealing.CurrentIf(crypto::EpochId{}), nullptr);
}

TEST(SealingEpochTest, ANearlyExhaustedEpochIsReplaced) {
  SealingEpoch sealing(Material(), {"acme", "default", 1});
  sealing.StartCountersAtForTesting(crypto::kNearlyExhaustedMessages - 2);
  auto epoch = sealing.Current();
  ASSERT_TRUE(epoch.ok());
  crypto::EpochSubkey* first = *epoch;
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
  std::vector<crypto::EpochSubkey*> seen(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = *sealing.Current(); });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(std::set<crypto::EpochSubkey*>(seen.begin(), seen.end()).size(), 1u);
}

}  // namespace
}  // namespace sealbox::server
