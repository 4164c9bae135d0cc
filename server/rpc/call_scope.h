// One RPC's bookkeeping, the same on the data plane, the admin plane and the KMS
// socket: when it arrived, its audit record (when the audit log is on), its outcome
// in the metrics, and at the end the response's plaintext fields wiped once gRPC has
// sent them. Each service adds only what its calls mean: the caller, the key, sizes.
#ifndef SEALBOX_SERVER_RPC_CALL_SCOPE_H_
#define SEALBOX_SERVER_RPC_CALL_SCOPE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "server/audit/audit_log.h"
#include "server/audit/audit_record.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

// Sent back as trailing metadata on every audited call, so that a caller can quote
// the request id its audit line has.
inline constexpr char kRequestIdMetadata[] = "sealbox-request-id";

// How a call is named: `service` and `method` as the audit log names them
// ("sealbox.v1.Crypto", "Seal"); `metric` as sealbox_rpcs_total's method label does,
// when it differs ("KmsEncrypt" for the KMS socket's "Encrypt").
struct CallName {
  absl::string_view service;
  const char* method;
  const char* metric = nullptr;
};

// Not thread-safe: a stream keeps its scope under its own lock.
class CallScope {
 public:
  // `audit` may be null: the audit log is off (or does not cover this plane).
  CallScope(grpc::CallbackServerContext& context, Metrics& metrics, AuditLog* audit, CallName name);

  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // The call's audit record, for the service to fill in; null without the audit log.
  AuditRecord* audit() { return record_.has_value() ? &*record_ : nullptr; }

  // For a stream: its peer, read now, since a cancelled call no longer knows it.
  // An audited call has it from its start; any other reads it only when a line needs
  // it (gRPC builds it on every ask).
  const std::string& KeepPeer();

  // Counts the outcome (and logs a failed authentication, naming the peer, never
  // the credential) and hands the audit record to the log. Once; a stream calls it
  // before it finishes its reactor, a unary call through Finish.
  void End(const absl::Status& status);

  // End, then the unary reactor finished with `status`. `plaintexts` (fields of the
  // response) are wiped once gRPC is done with the call. A failed call sends only its
  // status: its audit record says 0 response bytes.
  grpc::ServerUnaryReactor* Finish(const absl::Status& status,
                                   std::vector<std::string*> plaintexts = {});

 private:
  std::string Peer();

  grpc::CallbackServerContext& context_;
  Metrics& metrics_;
  AuditLog* const audit_;
  const char* const metric_;
  const absl::Time started_;
  std::optional<AuditRecord> record_;
  std::optional<std::string> peer_;
  bool ended_ = false;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_RPC_CALL_SCOPE_H_
