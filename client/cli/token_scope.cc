#include "client/cli/token_scope.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace sealbox::client {
namespace {

namespace v1 = ::sealbox::v1;

struct NamedOperation {
  const char* name;
  v1::Operation operation;
};
// The server's names for them (its PERMISSION_DENIED messages use the same).
constexpr NamedOperation kOperations[] = {{"seal", v1::SEAL},
                                          {"open", v1::OPEN},
                                          {"rewrap", v1::REWRAP},
                                          {"datakey", v1::GENERATE_DATA_KEY}};

std::vector<absl::string_view> Items(absl::string_view list) {
  std::vector<absl::string_view> items;
  for (absl::string_view item : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    items.push_back(absl::StripAsciiWhitespace(item));
  }
  return items;
}

}  // namespace

absl::Status ParseOperations(absl::string_view list, v1::IssueTokenRequest& request) {
  for (absl::string_view item : Items(list)) {
    bool known = false;
    for (const NamedOperation& named : kOperations) {
      if (item == named.name) {
        request.add_operations(named.operation);
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("--operations: unknown operation \"", item,
                       "\"; give some of seal, open, rewrap, datakey, separated by commas"));
    }
  }
  if (request.operations().empty()) {
    return absl::InvalidArgumentError("--operations: name at least one operation");
  }
  return absl::OkStatus();
}

void ParseKeyPatterns(absl::string_view list, v1::IssueTokenRequest& request) {
  for (absl::string_view item : Items(list)) request.add_keys(std::string(item));
}

absl::StatusOr<absl::Duration> ParseLifetime(absl::string_view text) {
  absl::Duration duration;
  int64_t days = 0;
  bool parsed = absl::ParseDuration(text, &duration);
  if (!parsed && absl::EndsWith(text, "d") &&
      absl::SimpleAtoi(text.substr(0, text.size() - 1), &days) && days > 0 && days <= 36525) {
    duration = absl::Hours(24 * days);
    parsed = true;
  }
  if (!parsed || duration < absl::Seconds(1) ||
      duration != absl::Seconds(absl::ToInt64Seconds(duration))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", text,
        "\" is not a duration in whole seconds: give one such as 90s, 15m, 24h or 30d"));
  }
  return duration;
}

void SetDuration(absl::Duration duration, google::protobuf::Duration& out) {
  out.set_seconds(absl::ToInt64Seconds(duration));
}

std::string DescribeScope(const v1::TokenInfo& token) {
  std::vector<std::string> operations;
  for (int operation : token.operations()) {
    std::string name = absl::StrCat("operation ", operation);
    for (const NamedOperation& named : kOperations) {
      if (named.operation == operation) name = named.name;
    }
    operations.push_back(name);
  }
  return absl::StrCat(operations.empty() ? "every operation" : absl::StrJoin(operations, ", "),
                      " on ",
                      token.keys().empty() ? "every key" : absl::StrJoin(token.keys(), ", "));
}

}  // namespace sealbox::client
