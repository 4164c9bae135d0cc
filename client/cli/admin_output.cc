#include "client/cli/admin_output.h"

#include "client/cli/token_scope.h"

#include <ctime>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"

namespace sealbox::client {
namespace {

namespace v1 = ::sealbox::v1;

std::string AlgorithmName(v1::Algorithm algorithm) {
  switch (algorithm) {
    case v1::AES_128_GCM:
      return "AES-128-GCM";
    case v1::AES_256_GCM:
      return "AES-256-GCM";
    default:
      return absl::StrCat("algorithm ", static_cast<int>(algorithm));
  }
}

std::string StateName(v1::KeyVersionState state) {
  switch (state) {
    case v1::ENABLED:
      return "enabled";
    case v1::DISABLED:
      return "disabled";
    case v1::DESTROYED:
      return "destroyed";
    default:
      return absl::StrCat("state ", static_cast<int>(state));
  }
}

}  // namespace

std::string JsonOf(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) {
    return "{}\n";  // only for messages with unknown Any types, which these have none of
  }
  if (json.empty() || json.back() != '\n') json += '\n';
  return json;
}

std::string FormatUnixTime(int64_t seconds) {
  if (seconds == 0) return "-";
  std::time_t time = static_cast<std::time_t>(seconds);
  std::tm utc;
  if (gmtime_r(&time, &utc) == nullptr) return absl::StrCat(seconds);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

std::string DescribeKey(const v1::Key& key) {
  std::string text = absl::StrFormat("%s/%s  %s  primary v%d  min decryption v%d", key.tenant(),
                                     key.name(), AlgorithmName(key.algorithm()),
                                     key.primary_version(), key.min_decryption_version());
  if (key.min_available_version() > 1) {
    absl::StrAppend(&text, absl::StrFormat("  trimmed below v%d", key.min_available_version()));
  }
  if (key.disabled()) absl::StrAppend(&text, "  DISABLED (no version seals or opens)");
  if (key.exportable()) absl::StrAppend(&text, "  exportable");
  if (key.has_rotation_period()) {
    // Whole days as the CLI takes them ("90d"), else Go-style ("1h30m0s").
    const int64_t seconds = key.rotation_period().seconds();
    absl::StrAppend(&text, "  rotates every ",
                    seconds % 86400 == 0 ? absl::StrCat(seconds / 86400, "d")
                                         : absl::FormatDuration(absl::Seconds(seconds)),
                    ", next ", FormatUnixTime(key.next_rotation_time().seconds()));
  }
  text += "\n";
  for (const v1::KeyVersion& version : key.versions()) {
    absl::StrAppend(
        &text,
        absl::StrFormat("  v%-4d %-10s %s%s%s\n", version.version(), StateName(version.state()),
                        FormatUnixTime(version.create_time().seconds()),
                        version.imported() ? "  imported" : "",
                        version.version() == key.primary_version() ? "  (primary)" : ""));
  }
  return text;
}

namespace {

// "ID  CREATED[  may SCOPE][  expires TIME][  renewed from ID][  DESCRIPTION]".
std::string DescribeToken(const v1::TokenInfo& token) {
  std::string text = absl::StrCat(token.id(), "  ", FormatUnixTime(token.create_time().seconds()));
  if (token.read_only()) absl::StrAppend(&text, "  read-only");
  // Tokens with every permission and no expiry, as before scopes, say no more.
  if (token.operations_size() > 0 || token.keys_size() > 0) {
    absl::StrAppend(&text, "  may ", DescribeScope(token));
  }
  if (token.has_expire_time()) {
    absl::StrAppend(&text, "  expires ", FormatUnixTime(token.expire_time().seconds()));
  }
  if (!token.renewed_from().empty()) {
    absl::StrAppend(&text, "  renewed from ", token.renewed_from());
  }
  absl::StrAppend(&text, token.description().empty() ? "" : "  ", token.description());
  return text;
}

}  // namespace

std::string DescribeAdminTokens(const v1::ListAdminTokensResponse& response) {
  std::string text =
      absl::StrCat("bootstrap  ", response.bootstrap_retired() ? "retired" : "in use",
                   "  (the --admin-token-file token)\n");
  for (const v1::TokenInfo& token : response.tokens()) {
    absl::StrAppend(&text, DescribeToken(token), "\n");
  }
  return text;
}

std::string DescribeKekStatus(const v1::KekStatus& status) {
  std::string text =
      absl::StrCat("fingerprint    ", status.fingerprint(), "\n", "created        ",
                   FormatUnixTime(status.create_time().seconds()), "\n", "sealed by      ",
                   status.root_key(), "\n", "kept at        ", status.sealed_at(), "\n");
  absl::StrAppend(&text, "rotation       ",
                  status.previous_keks() > 0 ? absl::StrCat("unfinished: ", status.previous_keks(),
                                                            " older KEK(s) still read")
                                             : std::string("none under way"),
                  "\n");
  if (status.rewrapping() || status.records_rewrapped() > 0) {
    absl::StrAppend(&text, "rewrapped      ", status.records_rewrapped(), " records",
                    status.rewrapping() ? " so far (rewrapping now)" : "", "\n");
  }
  absl::StrAppend(&text, "next rotation  ",
                  status.has_next_rotation_time()
                      ? FormatUnixTime(status.next_rotation_time().seconds())
                      : std::string("when asked (no --kek-rotation-period)"),
                  "\n");
  if (!status.last_error().empty()) {
    absl::StrAppend(&text, "last error     ", status.last_error(), "\n");
  }
  return text;
}

std::string DescribeTenant(const v1::Tenant& tenant) {
  std::string text = absl::StrCat("tenant ", tenant.name(), "\n");
  for (const std::string& key : tenant.keys()) absl::StrAppend(&text, "  key    ", key, "\n");
  for (const v1::TokenInfo& token : tenant.tokens()) {
    absl::StrAppend(&text, "  token  ", DescribeToken(token), "\n");
  }
  return text;
}

}  // namespace sealbox::client
