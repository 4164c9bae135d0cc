#include "server/keystore/etcd/etcd_storage.h"

#include <utility>

namespace sealbox::server::etcd {

absl::StatusOr<std::unique_ptr<EtcdStorage>> EtcdStorage::Create(EtcdStorageOptions options) {
  if (options.keks == nullptr) {
    auto given = GivenKeks(std::exchange(options.kek, std::nullopt),
                           std::exchange(options.previous_kek, std::nullopt));
    if (!given.ok()) return given.status();
    options.keks = *std::move(given);
  }
  if (options.prefix.empty()) return absl::InvalidArgumentError("the etcd prefix is empty");
  auto client = EtcdClient::Create(options.etcd);
  if (!client.ok()) return client.status();
  return std::unique_ptr<EtcdStorage>(new EtcdStorage(std::move(options), *std::move(client)));
}

EtcdStorage::EtcdStorage(EtcdStorageOptions options, std::unique_ptr<EtcdClient> client)
    : client_(std::move(client)),
      records_(*client_, std::move(options.prefix), std::move(options.keks), options.kek_source,
               options.page_size),
      watch_(*client_, records_, feed_),
      heartbeat_(*client_, records_, watch_, feed_, options.heartbeat) {}

EtcdStorage::~EtcdStorage() { Stop(); }

std::string EtcdStorage::Describe() const { return records_.Describe(); }

absl::StatusOr<bool> EtcdStorage::Prepare(bool create) { return records_.Prepare(create); }

absl::StatusOr<KeystoreContents> EtcdStorage::Load() { return records_.Load(); }

absl::StatusOr<std::unique_ptr<StorageTransaction>> EtcdStorage::Begin() {
  return records_.Begin();
}

absl::Status EtcdStorage::Import(const KeystoreContents& contents) {
  return records_.Import(contents);
}

absl::StatusOr<uint64_t> EtcdStorage::RewrapAll(const RewrapPace& pace) {
  return records_.RewrapAll(pace);
}

void EtcdStorage::Follow(uint64_t revision, StorageListener* listener) {
  feed_.Start(listener, revision);
  watch_.Start();
  heartbeat_.Start();
}

absl::Status EtcdStorage::Refresh() { return watch_.Reload(""); }

absl::StatusOr<uint64_t> EtcdStorage::Barrier(absl::Duration timeout) {
  return heartbeat_.Barrier(timeout);
}

// The watch first: a heartbeat waiting for it to resume then returns at once.
void EtcdStorage::Stop() {
  records_.Stop();
  watch_.Stop();
  heartbeat_.Stop();
}

}  // namespace sealbox::server::etcd
