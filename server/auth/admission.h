// Who may make a call, decided once per call and alike on each plane: the keystore
// must be loaded and current (a stale one may not know of a revoked token), and the
// caller identified. The data plane takes a tenant's token or client certificate, the
// admin plane an admin token, which may be read-only. (The KMS socket has no
// credential: its file's owner and mode say who may connect.)
#ifndef SEALBOX_SERVER_AUTH_ADMISSION_H_
#define SEALBOX_SERVER_AUTH_ADMISSION_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/server_context.h"
#include "server/audit/audit_record.h"
#include "server/auth/auth.h"
#include "server/keystore/keystore.h"

namespace sealbox::server {

// Who is calling on the data plane and the keystore as their call sees it (which
// may wait once for a key or version made elsewhere a moment ago).
struct Caller {
  CallSnapshot snapshot;
  std::string tenant;
  // What its token may do; null (a client certificate): everything.
  std::shared_ptr<const TokenGrant> grant;
};

// Who the caller is, for the audit log: tenant, credential and token id.
void AuditCaller(const Caller& caller, AuditRecord& record);

// What a read-only admin token may call: the admin methods that change nothing.
bool AdminMethodOnlyReads(absl::string_view method);

// Whether an admin caller may call `method`: PERMISSION_DENIED for a read-only admin
// token and a method that changes something.
absl::Status AdminMayCall(const Principal& caller, absl::string_view method);

class Admission {
 public:
  Admission(Keystore* keystore, const Authenticator* authenticator)
      : keystore_(keystore), authenticator_(authenticator) {}

  // A data-plane caller, once per call. Errors: UNAVAILABLE before the keystore has
  // loaded or while it is stale (Keystore::Serving), UNAUTHENTICATED /
  // PERMISSION_DENIED from the authenticator.
  absl::StatusOr<Caller> Authenticate(const grpc::CallbackServerContext& context) const;

  // An admin caller, once per call: the same UNAVAILABLE and the authenticator's
  // errors. What it may call is AdminMayCall's, so that a refused call's audit line
  // still names the token that made it.
  absl::StatusOr<Principal> Admin(const grpc::CallbackServerContext& context) const;

  // Whether a call already admitted may go on: a stream asks at each message, so one
  // that outlives the keystore's freshness ends with the same UNAVAILABLE.
  absl::Status StillServing() const { return keystore_->Serving(); }

 private:
  Keystore* keystore_;
  const Authenticator* authenticator_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_AUTH_ADMISSION_H_
