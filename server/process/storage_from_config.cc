#include "server/process/storage_from_config.h"

#include <utility>

#include "server/keystore/etcd/etcd_storage.h"

namespace sealbox::server {

absl::StatusOr<std::unique_ptr<FileStorage>> OpenFileStorage(const ServerConfig& config) {
  FileStorageOptions options;
  options.data_dir = config.data_dir;
  options.kek = CloneKek(config.kek);
  options.previous_kek = CloneKek(config.previous_kek);
  options.keks = config.keks;
  options.kek_source = config.kek_source;
  options.poll_interval = config.reload_interval;
  return FileStorage::Create(std::move(options));
}

absl::StatusOr<std::unique_ptr<etcd::EtcdStorage>> OpenEtcdStorage(const ServerConfig& config) {
  etcd::EtcdStorageOptions options;
  options.etcd = config.etcd;
  options.prefix = config.etcd_prefix;
  options.kek = CloneKek(config.kek);
  options.previous_kek = CloneKek(config.previous_kek);
  options.keks = config.keks;
  options.kek_source = config.kek_source;
  options.heartbeat = config.EtcdHeartbeat();
  return etcd::EtcdStorage::Create(std::move(options));
}

absl::StatusOr<std::unique_ptr<KeystoreStorage>> OpenStorage(const ServerConfig& config) {
  if (config.uses_etcd()) {
    auto storage = OpenEtcdStorage(config);
    if (!storage.ok()) return storage.status();
    return std::unique_ptr<KeystoreStorage>(*std::move(storage));
  }
  auto storage = OpenFileStorage(config);
  if (!storage.ok()) return storage.status();
  return std::unique_ptr<KeystoreStorage>(*std::move(storage));
}

}  // namespace sealbox::server
