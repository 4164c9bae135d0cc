// What every audited call fills in the same way, at its start: when it arrived, a
// request id (also sent back as the trailing metadata "sealbox-request-id", so a caller can
// quote it), the caller's own x-request-id, and the peer.
#ifndef SEALBOX_SERVER_AUDIT_AUDIT_CALL_H_
#define SEALBOX_SERVER_AUDIT_AUDIT_CALL_H_

#include "absl/strings/string_view.h"
#include "grpcpp/server_context.h"
#include "server/audit/audit_log.h"
#include "server/audit/audit_record.h"

namespace sealbox::server {

inline constexpr char kRequestIdMetadata[] = "sealbox-request-id";

// `started`: when the call arrived, as the call already measures it for its metrics.
AuditRecord StartAuditRecord(AuditLog& log, grpc::CallbackServerContext& context,
                             absl::string_view service, absl::string_view method,
                             absl::Time started);

// Sets the outcome and latency and hands the record to the log.
void FinishAuditRecord(AuditLog& log, AuditRecord record, absl::StatusCode code);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_AUDIT_AUDIT_CALL_H_
