#include "server/audit/audit_call.h"

#include <utility>

#include "absl/time/clock.h"

namespace sealbox::server {
namespace {

// A caller's own request id is kept to this length: it is the caller's text.
constexpr size_t kMaxClientRequestId = 128;

}  // namespace

AuditRecord StartAuditRecord(AuditLog& log, grpc::CallbackServerContext& context,
                             absl::string_view service, absl::string_view method,
                             absl::Time started) {
  AuditRecord record;
  record.time = started;
  record.service = service;
  record.method = method;
  record.request_id = log.NextRequestId();
  context.AddTrailingMetadata(kRequestIdMetadata, record.request_id);
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("x-request-id"); it != metadata.end()) {
    record.client_request_id.assign(it->second.data(),
                                    std::min(it->second.size(), kMaxClientRequestId));
  }
  record.peer = context.peer();
  return record;
}

void FinishAuditRecord(AuditLog& log, AuditRecord record, absl::StatusCode code) {
  record.code = code;
  record.latency = absl::Now() - record.time;
  log.Record(std::move(record));
}

}  // namespace sealbox::server
