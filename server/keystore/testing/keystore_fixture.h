// The fixture of the keystore's suites (keystore_test, tenant_admin_test,
// key_admin_test, token_admin_test): a fresh store of the backend the test is
// instantiated with, and keystores opened over it as replicas would.
#ifndef SEALBOX_SERVER_KEYSTORE_TESTING_KEYSTORE_FIXTURE_H_
#define SEALBOX_SERVER_KEYSTORE_TESTING_KEYSTORE_FIXTURE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/keystore/keystore.h"
#include "server/keystore/testing/test_store.h"

namespace sealbox::server::testing {

// Importable material: `size` bytes counting up from `first` (one byte repeated is
// refused).
inline std::vector<uint8_t> Material(size_t size, uint8_t first) {
  std::vector<uint8_t> material(size);
  for (size_t i = 0; i < size; ++i) material[i] = static_cast<uint8_t>(first + i);
  return material;
}

class KeystoreFixture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    store_ = NewTestStore(GetParam());
    ASSERT_NE(store_, nullptr) << GetParam();
  }

  std::unique_ptr<Keystore> OpenOrDie(bool create = true) {
    auto keystore = OpenKeystore(*store_, kek_, create);
    EXPECT_TRUE(keystore.ok()) << keystore.status();
    return keystore.ok() ? std::move(*keystore) : nullptr;
  }

  std::unique_ptr<testing::TestStore> store_;
  Kek kek_ = RandomKek();
};

}  // namespace sealbox::server::testing

#endif  // SEALBOX_SERVER_KEYSTORE_TESTING_KEYSTORE_FIXTURE_H_
