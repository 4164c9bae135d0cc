// How admin responses are printed: lines for people by default, JSON with --json.
#ifndef SEALBOX_CLIENT_CLI_ADMIN_OUTPUT_H_
#define SEALBOX_CLIENT_CLI_ADMIN_OUTPUT_H_

#include <string>

#include "google/protobuf/message.h"
#include "sealbox/v1/admin.pb.h"

namespace sealbox::client {

// The message as indented JSON with proto field names, every field present, and a
// final newline.
std::string JsonOf(const google::protobuf::Message& message);

// "acme/default  AES-256-GCM  primary v2  min decryption v1", then a line per version.
std::string DescribeKey(const sealbox::v1::Key& key);

// "tenant acme", then a line per key and per token (id, creation time, description).
std::string DescribeTenant(const sealbox::v1::Tenant& tenant);

// A line per admin token (id, creation, read-only, expiry, description), and
// whether the bootstrap token is retired.
std::string DescribeAdminTokens(const sealbox::v1::ListAdminTokensResponse& response);
// The KEK's custody and rotation, one "name  value" line each.
std::string DescribeKekStatus(const sealbox::v1::KekStatus& status);

// "2024-05-01 10:00:00 UTC"; "-" for 0.
std::string FormatUnixTime(int64_t seconds);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_ADMIN_OUTPUT_H_
