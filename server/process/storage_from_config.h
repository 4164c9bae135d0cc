// The one place the server's flags (ServerConfig) become a keystore backend: a data
// directory's file, or etcd. The server opens what the config names; the keystore
// transfer commands (--migrate-to-etcd, --export-from-etcd) open both.
#ifndef SEALBOX_SERVER_PROCESS_STORAGE_FROM_CONFIG_H_
#define SEALBOX_SERVER_PROCESS_STORAGE_FROM_CONFIG_H_

#include <memory>

#include "absl/status/statusor.h"
#include "server/keystore/file/file_storage.h"
#include "server/keystore/storage.h"
#include "server/process/server_config.h"

namespace sealbox::server {

namespace etcd {
class EtcdStorage;  // server/keystore/etcd/etcd_storage.h
}  // namespace etcd

// The store the config asks for: etcd when it names endpoints, else the file.
absl::StatusOr<std::unique_ptr<KeystoreStorage>> OpenStorage(const ServerConfig& config);

absl::StatusOr<std::unique_ptr<FileStorage>> OpenFileStorage(const ServerConfig& config);
absl::StatusOr<std::unique_ptr<etcd::EtcdStorage>> OpenEtcdStorage(const ServerConfig& config);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_STORAGE_FROM_CONFIG_H_
