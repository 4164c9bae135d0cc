// Stores for the keystore's tests: one suite runs over every backend. A TestStore is
// one fresh, empty place to keep a keystore (a data directory; an etcd prefix on an
// etcd server started for the test binary), that several keystores may share as
// replicas do.
#ifndef SEALBOX_SERVER_KEYSTORE_TESTING_TEST_STORE_H_
#define SEALBOX_SERVER_KEYSTORE_TESTING_TEST_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/keystore/kek.h"
#include "server/keystore/keystore.h"
#include "server/keystore/storage.h"
#include "server/keystore/testing/etcd_cluster.h"

namespace sealbox::server::testing {

Kek RandomKek();

// The etcd server every etcd store of this test binary lives on, started on first
// use; null if it could not start.
EtcdCluster* SharedEtcd();

class TestStore {
 public:
  virtual ~TestStore() = default;
  // "file" or "etcd".
  virtual std::string backend() const = 0;
  // A storage over this store, as one replica would open it.
  virtual absl::StatusOr<std::unique_ptr<KeystoreStorage>> NewStorage(
      const Kek& kek, const Kek* previous_kek = nullptr) = 0;
};

// A fresh store of `backend` ("file" or "etcd").
std::unique_ptr<TestStore> NewTestStore(const std::string& backend);

// Every backend the suite runs over.
std::vector<std::string> AllBackends();

// Opens a keystore over a new storage of `store`.
absl::StatusOr<std::unique_ptr<Keystore>> OpenKeystore(
    TestStore& store, const Kek& kek, bool create = true, const Kek* previous_kek = nullptr,
    absl::Duration min_rotation_period = absl::Hours(1));

}  // namespace sealbox::server::testing

#endif  // SEALBOX_SERVER_KEYSTORE_TESTING_TEST_STORE_H_
