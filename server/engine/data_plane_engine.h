// Seal, Open, Rewrap and stream setup for one tenant's keys, in absl terms. The gRPC
// service (data_plane_service.cc) is a thin layer over this.
#ifndef SEALBOX_SERVER_ENGINE_DATA_PLANE_ENGINE_H_
#define SEALBOX_SERVER_ENGINE_DATA_PLANE_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "crypto/format/epochs.h"
#include "crypto/format/output_bytes.h"
#include "crypto/format/stream.h"
#include "crypto/format/unary.h"
#include "server/engine/decryption_limit.h"
#include "server/keystore/call_snapshot.h"
#include "server/keystore/keystore.h"

namespace sealbox::server {

// The key versions of a Rewrap: the one that sealed the new ciphertext and the one
// the old ciphertext named.
struct Rewrapped {
  uint32_t key_version = 0;
  uint32_t previous_key_version = 0;
};

// OpenStream's check of the first ciphertext byte it receives: a unary ciphertext is
// INVALID_ARGUMENT naming Open, anything else is OK (and fails or opens as usual).
absl::Status CheckOpenStreamFormat(uint8_t first_byte);

// A key as a call names it: the caller's tenant, the key's name, and the call's view
// of the keystore, which may wait once for a key or version made through another
// replica a moment ago (server/keystore/call_snapshot.h).
struct CallKey {
  CallSnapshot& keys;
  const std::string& tenant;
  const std::string& name;
};

class DataPlaneEngine {
 public:
  // `epochs`: the keystore's (Keystore::epochs), which opens epochs other than a
  // key's sealing one; `max_decryption_failures` (0: none) is the per-key limit of
  // decryption_limit.h.
  explicit DataPlaneEngine(crypto::Epochs& epochs, uint64_t max_decryption_failures = 0);

  // Errors: NOT_FOUND (no such key in this tenant), FAILED_PRECONDITION (version
  // disabled/destroyed/below minimum), INVALID_ARGUMENT "decryption failed", and
  // for Open and Rewrap INVALID_ARGUMENT naming OpenStream when given a stream
  // ciphertext (the format byte is public; see CheckOpenStreamFormat).
  // Open, Rewrap and NewStreamOpener also RESOURCE_EXHAUSTED for a key over its
  // decryption-failure limit (IsDecryptionLimitReached), and UNAVAILABLE for a
  // version newer than the call's snapshot knows of when its wait for the store
  // failed (sealed elsewhere a moment ago, not a forgery, so not counted as one).
  //
  // Tenant isolation: every error names only the caller's own keys. A key that
  // exists only in another tenant is NOT_FOUND exactly like one that exists nowhere,
  // and a ciphertext sealed under another tenant's key fails like garbage ("decryption
  // failed"): its version is looked up in the caller's key, and the tenant and key
  // name are bound into the subkey derivation.
  //
  // Each output is written once, into the caller's `Output`: crypto::OutputBytes for
  // a unary call (sent as it is, and not zero-filled before the cipher writes it) or
  // std::string (a protobuf field, as a batch item's result is).
  //
  // Seals into `ciphertext`; returns the key version that sealed it.
  template <typename Output>
  absl::StatusOr<uint32_t> Seal(const CallKey& key, absl::Span<const uint8_t> plaintext,
                                absl::Span<const uint8_t> aad, Output& ciphertext);
  // Opens into `plaintext` (resized to fit; wiped and emptied on failure); returns the
  // key version.
  template <typename Output>
  absl::StatusOr<uint32_t> Open(const CallKey& key, absl::Span<const uint8_t> ciphertext,
                                absl::Span<const uint8_t> aad, Output& plaintext);
  // Opens and seals again under the primary version, into `new_ciphertext`.
  template <typename Output>
  absl::StatusOr<Rewrapped> Rewrap(const CallKey& key, absl::Span<const uint8_t> ciphertext,
                                   absl::Span<const uint8_t> aad, Output& new_ciphertext);

  // A sealer for the key's primary version; sets `key_version`.
  absl::StatusOr<std::unique_ptr<crypto::StreamSealer>> NewStreamSealer(
      const CallKey& key, absl::Span<const uint8_t> aad, uint32_t segment_bytes,
      uint32_t& key_version);

  // An opener that looks the header's version up in the call's snapshot (a copy of
  // the call's view is kept by the opener).
  absl::StatusOr<std::unique_ptr<crypto::StreamOpener>> NewStreamOpener(
      const CallKey& key, absl::Span<const uint8_t> aad);

  // Counts a failed OpenStream of the caller's key (unary Open and Rewrap count
  // their own).
  void RecordStreamDecryptionFailure(const CallKey& key);

 private:
  // Counts a failed open against the key's limit; logs when it is reached.
  void CountFailure(const KeyEntry& entry);
  // UNAVAILABLE when `version` of the key is unknown because the call's wait for
  // the store failed (CallSnapshot::StoreUnreachableFor); OK otherwise.
  static absl::Status NotKnownYet(const CallKey& key, uint32_t version);
  // The key version a unary ciphertext names (0 if it has no valid header).
  static uint32_t VersionIn(absl::Span<const uint8_t> ciphertext);

  // Open without the limit's bookkeeping.
  template <typename Output>
  absl::StatusOr<uint32_t> OpenWith(const KeyEntry& entry, absl::Span<const uint8_t> ciphertext,
                                    absl::Span<const uint8_t> aad, Output& plaintext);

  // The subkey for (key, version, epoch), from epochs_.
  absl::StatusOr<std::shared_ptr<const crypto::EpochSubkey>> SubkeyForOpen(
      const KeyEntry& entry, const crypto::UnaryHeader& header);

  crypto::Epochs& epochs_;
  DecryptionFailureLimit failure_limit_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_ENGINE_DATA_PLANE_ENGINE_H_
