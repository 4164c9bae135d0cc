// What the audit log says about one request: who made it, what it asked for and
// how it ended. Never plaintext, ciphertext, associated data, key material or a
// token: a record has no field that could hold them.
#ifndef SEALBOX_SERVER_AUDIT_AUDIT_RECORD_H_
#define SEALBOX_SERVER_AUDIT_AUDIT_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sealbox::server {

struct AuditRecord {
  absl::Time time;  // when the request arrived
  absl::Duration latency;
  absl::string_view service;  // "sealbox.v1.Crypto", "sealbox.v1.Admin", "v2.KeyManagementService"
  absl::string_view method;   // "Seal"
  std::string request_id;     // this server's (audit_log.h)
  std::string client_request_id;  // the caller's x-request-id, if it sent one
  // KMS v2 calls: the uid kube-apiserver gave the call (it logs the same).
  std::string kms_uid;
  std::string peer;  // gRPC's peer address, "ipv4:10.0.0.7:41234"
  absl::StatusCode code = absl::StatusCode::kOk;
  // Who: "token" (token_id names it), "certificate" (a client certificate's
  // tenant), "admin_token" (token_id is the admin token's id, "bootstrap" for the
  // configured one), or "" when the caller was not identified.
  absl::string_view credential;
  std::string token_id;
  // Data plane: the caller's tenant. Admin plane: the tenant acted on, if any.
  std::string tenant;
  std::string key;
  uint32_t key_version = 0;  // 0: none (the call failed first, or names no version)
  // Admin calls on one token (RevokeToken, RevokeAdminToken): its id.
  std::string target_token_id;
  // Batch calls: their item count, how many failed, and the keys they named.
  int items = 0;
  int failed_items = 0;
  std::vector<std::string> keys;  // at most kMaxAuditedKeys
  bool keys_truncated = false;    // it named more
  // Custody events (service "sealbox.custody": the KEK unsealed or created, the root
  // key lost or back): which root key, and which KEK by its fingerprint (hex; not
  // secret, server/keystore/kek.h).
  std::string root_key;
  std::string kek_fingerprint;
  // Serialized request and response messages (a stream's, all of them).
  int64_t request_bytes = 0;
  int64_t response_bytes = 0;
};

// Distinct key names a batch line lists, at most.
inline constexpr size_t kMaxAuditedKeys = 16;

// The record as one line of JSON, newline included.
void AppendAuditLine(const AuditRecord& record, std::string& out);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_AUDIT_AUDIT_RECORD_H_
