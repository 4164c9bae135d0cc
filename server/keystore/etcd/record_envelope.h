// One etcd value: a keystore record wrapped under the KEK, bound to its etcd key.
//
//   offset size
//   0      4    magic "SBXR"
//   4      1    format version = 1
//   5      16   KEK fingerprint: HMAC-SHA256(KEK, "sealbox/v1/kek-fingerprint")[0:16]
//   21     16   salt, random per write
//   37     12   nonce, random per write
//   49     n    AES-256-GCM ciphertext of the serialized sealbox.internal.Record
//   49+n   16   tag
//
// Wrapping key = HKDF-SHA256(ikm = KEK, salt, info = "sealbox/v1/etcd-record"): a
// fresh key per write. GCM AAD = the 49 header bytes || the full etcd key (prefix
// included), so a value copied to another name, tenant or prefix does not open.
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_RECORD_ENVELOPE_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_RECORD_ENVELOPE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/secret/secret_bytes.h"
#include "sealbox/internal/keystore_record.pb.h"
#include "server/keystore/kek.h"

namespace sealbox::server::etcd {

inline constexpr size_t kRecordHeaderBytes = 49;

// Wraps `record` for the etcd key `etcd_key` under `kek`.
absl::StatusOr<std::string> SealRecord(const Kek& kek, absl::string_view etcd_key,
                                       const internal::Record& record);

// Unwraps the value found at `etcd_key`. FAILED_PRECONDITION "etcd record <key> was
// written with a different KEK"; DATA_LOSS "etcd record <key> is damaged, or was
// moved there from another name" (truncated, bad magic, failed tag, unparsable).
// Messages name the etcd key, never the content.
absl::StatusOr<internal::Record> OpenRecord(const Kek& kek, absl::string_view etcd_key,
                                            absl::string_view value);

// Whether the value's header carries `kek`'s fingerprint (false when malformed).
bool RecordWrittenWithKek(const Kek& kek, absl::string_view value);

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_RECORD_ENVELOPE_H_
