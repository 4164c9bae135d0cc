// The keystore: every tenant, token hash and key version, persisted as one file in
// the data directory, wrapped under the KEK, and held in memory as an immutable
// snapshot that is swapped atomically. Readers (the data plane) never take a lock.
//
//   server/keystore/keystore_file.h  the file's envelope (format, KEK, fingerprint)
//   server/keystore/durable_file.h   temp + fsync + rename + fsync dir, flock
//   server/keystore/snapshot.h       the in-memory view: KeyEntry, Snapshot
//   server/keystore/names.h          what tenant and key names may be
//   server/keystore/tokens.h         bearer tokens
#ifndef SEALBOX_SERVER_KEYSTORE_KEYSTORE_H_
#define SEALBOX_SERVER_KEYSTORE_KEYSTORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "crypto/format/secret_bytes.h"
#include "sealbox/v1/admin.pb.h"
#include "server/keystore/snapshot.h"

namespace sealbox::server {

struct FileRead;

struct KeystoreOptions {
  std::string data_dir;            // the file is <data_dir>/keystore.sbx
  crypto::SecretBytes kek;         // 32 bytes
  // While the KEK is being changed: the one before it (32 bytes), or empty. A file
  // still under it is read with it and, at Open, written again under `kek`; every
  // write is under `kek`.
  crypto::SecretBytes previous_kek;
  bool create_if_missing = false;  // also creates data_dir (0700)
  // Tests only: called after the temp file is written and synced, before the rename;
  // returning true makes the write fail there.
  std::function<bool()> fail_before_rename_for_testing;
};

class Keystore {
 public:
  // Loads the keystore. Errors, with clear messages, never touching the file: a
  // KEK that is not 32 bytes (INVALID_ARGUMENT), a missing file (NOT_FOUND, unless
  // create_if_missing: then an empty keystore is written, generation 1), a wrong KEK
  // (FAILED_PRECONDITION; the file records a KEK fingerprint), a damaged or truncated
  // file (DATA_LOSS). A file under `previous_kek` is rewrapped under `kek` at once.
  static absl::StatusOr<std::unique_ptr<Keystore>> Open(KeystoreOptions options);

  // Whether Open found the file under the previous KEK and rewrote it under the
  // current one.
  bool rewrapped_at_open() const;

  // The current snapshot. Lock-free for readers.
  std::shared_ptr<const Snapshot> snapshot() const;

  // Reloads if the file on disk changed (another replica wrote it). Cheap when it
  // did not: it reads the 64-byte header and compares the generation and the file's
  // identity. A file that fails to load keeps the old snapshot and returns the error.
  absl::Status ReloadIfChanged();

  // Admin operations. Each one: takes an exclusive lock on the file (flock), reads
  // the file (another process may have changed it), validates and applies the
  // change, writes a new file (temp + fsync + rename + fsync dir), then swaps the
  // snapshot. A failed write leaves the old file and snapshot. Errors:
  // INVALID_ARGUMENT (bad names, bad material), NOT_FOUND, ALREADY_EXISTS,
  // FAILED_PRECONDITION (e.g. destroying the primary version). Messages never carry
  // key material or tokens.
  absl::StatusOr<v1::Tenant> CreateTenant(const std::string& name);
  absl::Status DeleteTenant(const std::string& name);
  absl::StatusOr<std::vector<v1::Tenant>> ListTenants() const;
  absl::StatusOr<v1::IssueTokenResponse> IssueToken(const std::string& tenant,
                                                    const std::string& description);
  absl::Status RevokeToken(const std::string& tenant, const std::string& token_id);
  // `algorithm` UNSPECIFIED means AES_256_GCM.
  absl::StatusOr<v1::Key> CreateKey(const std::string& tenant, const std::string& key,
                                    v1::Algorithm algorithm);
  // A new key (its algorithm from the material's size), or a new primary version of
  // an existing key (the size must match its algorithm).
  absl::StatusOr<v1::Key> ImportKey(const std::string& tenant, const std::string& key,
                                    absl::Span<const uint8_t> material);
  absl::StatusOr<v1::Key> RotateKey(const std::string& tenant, const std::string& key);
  absl::StatusOr<v1::Key> GetKey(const std::string& tenant, const std::string& key) const;
  absl::StatusOr<std::vector<v1::Key>> ListKeys(const std::string& tenant) const;
  // 1 <= version <= the primary version.
  absl::StatusOr<v1::Key> SetMinDecryptionVersion(const std::string& tenant,
                                                  const std::string& key,
                                                  uint32_t version);
  absl::StatusOr<v1::Key> SetVersionState(const std::string& tenant,
                                          const std::string& key, uint32_t version,
                                          v1::KeyVersionState state);  // ENABLED/DISABLED
  // Wipes the material; the version stays, DESTROYED. Destroying twice is fine.
  absl::StatusOr<v1::Key> DestroyVersion(const std::string& tenant,
                                         const std::string& key, uint32_t version);

  ~Keystore();

 private:
  struct State;
  explicit Keystore(std::unique_ptr<State> state);

  absl::Status Load(const FileRead& read);
  const crypto::SecretBytes& KekFor(const FileRead& read) const;
  absl::StatusOr<std::shared_ptr<const Snapshot>> Commit(
      const std::function<absl::Status(internal::KeystoreFile&)>& change);

  std::unique_ptr<State> state_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_KEYSTORE_H_
