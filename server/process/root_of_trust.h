// The KEK from the root of trust (server/custody): the HSM key config.hsm names
// unseals the KEK kept beside the keystore, which --init creates (and, with
// --hsm-create-key, the HSM key too). No fallback: an HSM that cannot be used at start
// stops the start, with a message that says what to fix.
#ifndef SEALBOX_SERVER_PROCESS_ROOT_OF_TRUST_H_
#define SEALBOX_SERVER_PROCESS_ROOT_OF_TRUST_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/custody/root_key.h"
#include "server/custody/sealed_kek_source.h"
#include "server/custody/sealed_kek_store.h"
#include "server/process/server_config.h"

namespace sealbox::server {

struct RootOfTrust {
  std::unique_ptr<custody::RootKey> root_key;  // kept to watch it while serving
  std::unique_ptr<custody::SealedKekStore> store;
  std::unique_ptr<custody::SealedKekSource> source;  // the storage asks it for new KEKs
  std::string sealed_kek_at;                         // where the sealed KEK is: "/data/kek.sealed"
  std::string kek_fingerprint;                       // hex: which KEK, safe to log
  bool created_root_key = false;
  bool created_kek = false;
  absl::Duration check_interval = absl::Seconds(10);  // how often it is watched
};

// Opens config.hsm's key, reads (or, with config.create_keystore, creates) the sealed
// KEK beside the keystore and unseals it (with the KEKs of an unfinished rotation)
// into config.keks, config.kek_source pointing at the returned source. An etcd that
// does not answer yet is waited for, up to a minute.
absl::StatusOr<RootOfTrust> UnsealKek(ServerConfig& config);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_ROOT_OF_TRUST_H_
