// The file backend: the whole keystore in one KEK-wrapped file, <data_dir>/keystore.sbx
// (keystore_file.h draws it). The embedded default: dev mode, one replica, tests.
//
// A transaction holds an exclusive flock on <data_dir>/keystore.lock, reads and
// decrypts the file, and commits by writing a whole new file (temp + fsync + rename +
// fsync dir, durable_file.h), so a crash leaves the old keystore or the new one.
// Other processes' writes are found by polling the file's header.
#ifndef SEALBOX_SERVER_KEYSTORE_FILE_FILE_STORAGE_H_
#define SEALBOX_SERVER_KEYSTORE_FILE_FILE_STORAGE_H_

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "crypto/secret/secret_bytes.h"
#include "server/keystore/file/durable_file.h"
#include "server/keystore/kek.h"
#include "server/keystore/storage.h"

namespace sealbox::server {

struct FileStorageOptions {
  std::string data_dir;
  std::optional<Kek> kek;  // required
  // While the KEK is being changed: the one before it. A file still under it is read
  // with it and, at Prepare, written again under `kek`.
  std::optional<Kek> previous_kek;
  // Instead of the two above, when a root key seals the KEK (server/custody): the
  // KEKs, and where newer ones come from, asked again under the flock before each
  // write (it must outlive the storage).
  std::shared_ptr<const KekRing> keks;
  KekSource* kek_source = nullptr;
  // How often Follow looks for another process's write.
  absl::Duration poll_interval = absl::Seconds(1);
  // Tests only: called after the temp file is written and synced, before the rename;
  // returning true makes the write fail there.
  std::function<bool()> fail_before_rename_for_testing;
};

class FileStorage : public KeystoreStorage {
 public:
  // INVALID_ARGUMENT for no KEK or no data directory.
  static absl::StatusOr<std::unique_ptr<FileStorage>> Create(FileStorageOptions options);
  ~FileStorage() override;

  std::string Describe() const override;
  // A missing file is NOT_FOUND "keystore <path> does not exist", unless `create`:
  // then the directory (0700) and an empty keystore at generation 1 are made.
  absl::StatusOr<bool> Prepare(bool create) override;
  absl::StatusOr<KeystoreContents> Load() override;
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin() override;
  void Follow(uint64_t revision, StorageListener* listener) override;
  // Reloads if the file changed. Cheap when it did not: it reads the 64-byte header
  // and compares the generation and the file's identity. A file that fails to load
  // leaves the listener's keystore as it was and returns the error.
  absl::Status Refresh() override;
  absl::StatusOr<uint64_t> Barrier(absl::Duration timeout) override;
  void Stop() override;

  // A new keystore file at generation 1; ALREADY_EXISTS when there is one.
  absl::Status Import(const KeystoreContents& contents) override;

  StoreKeks& keks() override { return keks_; }
  // The file written again under the current KEK if it is not: its record count then.
  absl::StatusOr<uint64_t> RewrapAll(const RewrapPace& pace) override;

 private:
  class Transaction;
  explicit FileStorage(FileStorageOptions options);

  KekRef KekFor(absl::Span<const uint8_t> file);
  absl::StatusOr<KeystoreContents> Open(const FileRead& read);
  // Whether the file is under the current KEK; with `mu_` and the flock held.
  bool UnderCurrentKek(const FileRead& read);
  // Writes `contents` under the current KEK; with `mu_` and the flock held.
  absl::StatusOr<FileIdentity> Write(const KeystoreContents& contents);

  const FileStorageOptions options_;
  const std::string path_;
  const std::string lock_path_;
  StoreKeks keks_;
  // One transaction or reload at a time in this process; the flock excludes others.
  std::mutex mu_;
  FileIdentity loaded_;                  // the file the listener's keystore came from; mu_
  uint64_t loaded_generation_ = 0;       // mu_
  StorageListener* listener_ = nullptr;  // set once by Follow
  absl::Notification stopping_;
  std::thread poller_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_FILE_FILE_STORAGE_H_
