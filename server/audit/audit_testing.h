// A typical audit record, for the audit log's tests and benchmark: a 1 KiB Seal by a
// tenant token.
#ifndef SEALBOX_SERVER_AUDIT_AUDIT_TESTING_H_
#define SEALBOX_SERVER_AUDIT_AUDIT_TESTING_H_

#include "absl/time/time.h"
#include "server/audit/audit_record.h"

namespace sealbox::server {

inline AuditRecord ExampleSealRecord() {
  AuditRecord record;
  record.time = absl::FromUnixMicros(1764943200123456);  // 2025-12-05T14:00:00.123456Z
  record.latency = absl::Microseconds(52);
  record.service = "sealbox.v1.Crypto";
  record.method = "Seal";
  record.request_id = "3f09c2d17a5b4e01-00000000002a";
  record.peer = "ipv4:127.0.0.1:41234";
  record.credential = "token";
  record.token_id = "9c1d0e5a7b3f2e11";
  record.tenant = "acme";
  record.key = "orders";
  record.key_version = 3;
  record.request_bytes = 1035;
  record.response_bytes = 1085;
  return record;
}

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_AUDIT_AUDIT_TESTING_H_
