// --migrate-keystore and --export-keystore: a whole keystore copied between the file
// backend and etcd, read back from where it went and compared record by record. The
// copy stays under the KEK all the way (it is unwrapped in memory only to be wrapped
// again for its new place); nothing secret is printed.
#ifndef SEALBOX_SERVER_PROCESS_KEYSTORE_TRANSFER_H_
#define SEALBOX_SERVER_PROCESS_KEYSTORE_TRANSFER_H_

#include <string>

#include "absl/status/statusor.h"
#include "server/process/server_config.h"

namespace sealbox::server {

// The file keystore in config.data_dir into the empty etcd prefix of config.etcd.
// Returns a one-line summary (how many tenants, keys, tokens, at what revision).
absl::StatusOr<std::string> MigrateKeystoreToEtcd(const ServerConfig& config);

// The etcd keystore into a new file keystore in config.data_dir (which must hold
// none): a backup that the file backend can serve.
absl::StatusOr<std::string> ExportKeystoreFromEtcd(const ServerConfig& config);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_KEYSTORE_TRANSFER_H_
