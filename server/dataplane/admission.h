// What every data-plane call checks before any work: that the keystore has loaded, who
// is calling (their tenant), the key name, the associated data's size and the
// message's size.
#ifndef SEALBOX_SERVER_DATAPLANE_ADMISSION_H_
#define SEALBOX_SERVER_DATAPLANE_ADMISSION_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"
#include "server/audit/audit_record.h"
#include "server/auth/auth.h"
#include "server/keystore/keystore.h"

namespace sealbox::server {

// Who is calling and the snapshot their call works on.
struct Caller {
  std::shared_ptr<const Snapshot> snapshot;
  std::string tenant;
  // What its token may do; null (a client certificate): everything.
  std::shared_ptr<const TokenGrant> grant;
  // Whether a key or version missing from `snapshot` may be waited for (the engine's
  // CatchUp). A batch call waits once for all its items, then clears it.
  bool may_catch_up = true;
};

// Who the caller is, for the audit log: tenant, credential and token id.
void AuditCaller(const Caller& caller, AuditRecord& record);

class Admission {
 public:
  Admission(Keystore* keystore, const Authenticator* authenticator)
      : keystore_(keystore), authenticator_(authenticator) {}

  // The caller, once per call. Errors: UNAVAILABLE before the keystore has loaded or
  // while it is stale (Keystore::Serving), UNAUTHENTICATED / PERMISSION_DENIED from
  // the authenticator.
  absl::StatusOr<Caller> Authenticate(const grpc::CallbackServerContext& context) const;

  // Whether a call already admitted may go on: a stream asks at each message, so one
  // that outlives the keystore's freshness ends with the same UNAVAILABLE.
  absl::Status StillServing() const { return keystore_->Serving(); }

  // One request of a call (a batch has several): `size` is the plaintext or
  // ciphertext it carries, `limit` its unary bound (a stream's start message passes
  // 0 and 0). Errors: INVALID_ARGUMENT for a bad key name or oversized associated
  // data, PERMISSION_DENIED when the caller's token may not do `operation` on
  // `key`, RESOURCE_EXHAUSTED for an oversized message.
  static absl::Status CheckRequest(const Caller& caller, Operation operation,
                                   const std::string& key, const std::string& aad, size_t size,
                                   size_t limit);

 private:
  Keystore* keystore_;
  const Authenticator* authenticator_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_ADMISSION_H_
