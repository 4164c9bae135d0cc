#include "server/audit/audit_record.h"

#include <cstdint>

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

// RFC 3339 in UTC with microseconds. absl::FormatTime takes about a microsecond, and
// the writer formats thousands of lines a second nearly all in the same second as
// the line before: so the text up to the second is kept per thread.
void AppendTime(absl::Time time, std::string& out) {
  constexpr int64_t kMicrosPerSecond = 1000000;
  thread_local int64_t cached_second = INT64_MIN;
  thread_local std::string cached_text;
  const int64_t micros = absl::ToUnixMicros(time);
  int64_t second = micros / kMicrosPerSecond;
  int64_t fraction = micros % kMicrosPerSecond;
  if (fraction < 0) {  // before 1970
    --second;
    fraction += kMicrosPerSecond;
  }
  if (second != cached_second) {
    cached_text =
        absl::FormatTime("%Y-%m-%dT%H:%M:%S", absl::FromUnixSeconds(second), absl::UTCTimeZone());
    cached_second = second;
  }
  char digits[8] = {'.', '0', '0', '0', '0', '0', '0', 'Z'};
  for (int i = 6; i >= 1; --i, fraction /= 10) digits[i] = static_cast<char>('0' + fraction % 10);
  out += '"';
  out += cached_text;
  out.append(digits, sizeof(digits));
  out += '"';
}

}  // namespace

// Field names are fixed and always present (empty or 0 when they do not apply),
// except the batch and target fields, so that a collector's schema does not move.
void AppendAuditLine(const AuditRecord& record, std::string& out) {
  out += "{\"time\":";
  AppendTime(record.time, out);
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
  if (!record.kms_uid.empty()) AddString("kms_uid", record.kms_uid, out);
  if (!record.root_key.empty()) AddString("root_key", record.root_key, out);
  if (!record.kek_fingerprint.empty()) AddString("kek_fingerprint", record.kek_fingerprint, out);
  out += "}\n";
}

}  // namespace sealbox::server
