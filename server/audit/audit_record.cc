#include "server/audit/audit_record.h"

#include "absl/strings/str_cat.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

void AddString(absl::string_view name, absl::string_view value, std::string& out) {
  absl::StrAppend(&out, ",\"", name, "\":");
  AppendJsonString(value, out);
}

void AddNumber(absl::string_view name, int64_t value, std::string& out) {
  absl::StrAppend(&out, ",\"", name, "\":", value);
}

}  // namespace

// Field names are fixed and always present (empty or 0 when they do not apply),
// except the batch and target fields, so that a collector's schema does not move.
void AppendAuditLine(const AuditRecord& record, std::string& out) {
  out += "{\"time\":";
  AppendJsonString(
      absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", record.time, absl::UTCTimeZone()), out);
  AddString("request_id", record.request_id, out);
  AddString("service", record.service, out);
  AddString("method", record.method, out);
  AddString("code", absl::StatusCodeToString(record.code), out);
  AddNumber("latency_us", absl::ToInt64Microseconds(record.latency), out);
  AddString("peer", record.peer, out);
  AddString("credential", record.credential, out);
  AddString("token_id", record.token_id, out);
  AddString("tenant", record.tenant, out);
  AddString("key", record.key, out);
  AddNumber("key_version", record.key_version, out);
  AddNumber("request_bytes", record.request_bytes, out);
  AddNumber("response_bytes", record.response_bytes, out);
  if (record.items > 0) {
    AddNumber("items", record.items, out);
    AddNumber("failed_items", record.failed_items, out);
    out += ",\"keys\":[";
    for (size_t i = 0; i < record.keys.size(); ++i) {
      if (i > 0) out += ',';
      AppendJsonString(record.keys[i], out);
    }
    out += ']';
    if (record.keys_truncated) out += ",\"keys_truncated\":true";
  }
  if (!record.target_token_id.empty()) {
    AddString("target_token_id", record.target_token_id, out);
  }
  if (!record.client_request_id.empty()) {
    AddString("client_request_id", record.client_request_id, out);
  }
  out += "}\n";
}

}  // namespace sealbox::server
