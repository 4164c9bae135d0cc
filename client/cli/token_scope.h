// How the CLI writes a token's scope and lifetime: `--operations seal,open`,
// `--keys 'orders-*,invoices'`, `--ttl 24h`, and how it describes them back.
#ifndef SEALBOX_CLIENT_CLI_TOKEN_SCOPE_H_
#define SEALBOX_CLIENT_CLI_TOKEN_SCOPE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "sealbox/v1/admin.pb.h"

namespace sealbox::client {

// "seal,open,rewrap,datakey" (any of them, comma-separated) into `request`.
absl::Status ParseOperations(absl::string_view list, sealbox::v1::IssueTokenRequest& request);

// "orders-*,invoices" into `request`; the server checks each pattern.
void ParseKeyPatterns(absl::string_view list, sealbox::v1::IssueTokenRequest& request);

// A lifetime or period: "90s", "15m", "24h", "1h30m", or whole days "30d". Whole
// seconds, at least one.
absl::StatusOr<absl::Duration> ParseLifetime(absl::string_view text);
void SetDuration(absl::Duration duration, google::protobuf::Duration& out);

// "seal, open on orders-*, invoices"; "every operation on every key" for none.
std::string DescribeScope(const sealbox::v1::TokenInfo& token);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_TOKEN_SCOPE_H_
