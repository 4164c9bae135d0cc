#include "server/auth/token_access.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/keystore/names.h"

namespace sealbox::server {
namespace {

constexpr Operation kOperations[] = {Operation::kSeal, Operation::kOpen, Operation::kRewrap,
                                     Operation::kGenerateDataKey};

uint32_t Bit(Operation operation) { return 1u << static_cast<int>(operation); }

bool Known(Operation operation) {
  return std::find(std::begin(kOperations), std::end(kOperations), operation) !=
         std::end(kOperations);
}

absl::Status BadPattern() {
  return absl::InvalidArgumentError(
      "a token's key pattern must be a key name (1-64 of [A-Za-z0-9_.-]) or a prefix "
      "of one followed by '*', such as \"orders-*\" (\"*\" alone: every key)");
}

}  // namespace

absl::string_view TokenAccess::Name(Operation operation) {
  switch (operation) {
    case Operation::kSeal:
      return "seal";
    case Operation::kOpen:
      return "open";
    case Operation::kRewrap:
      return "rewrap";
    case Operation::kGenerateDataKey:
      return "datakey";
  }
  return "unknown";
}

absl::StatusOr<Operation> TokenAccess::FromName(absl::string_view name) {
  for (Operation operation : kOperations) {
    if (name == Name(operation)) return operation;
  }
  return absl::InvalidArgumentError(
      "an operation is one of seal, open, rewrap, datakey (each with its stream and "
      "batch calls)");
}

absl::StatusOr<TokenAccess> TokenAccess::Create(const TokenScope& scope) {
  TokenAccess access;
  std::vector<std::string> operation_names;
  for (Operation operation : scope.operations) {
    if (!Known(operation)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown operation ", static_cast<int>(operation),
                       " in the token's scope: it may name SEAL, OPEN, REWRAP, GENERATE_DATA_KEY"));
    }
    if ((access.operations_ & Bit(operation)) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("operation ", Name(operation), " is named twice in the token's scope"));
    }
    access.operations_ |= Bit(operation);
  }
  for (Operation operation : kOperations) {  // in a fixed order, whatever was given
    if ((access.operations_ & Bit(operation)) != 0) {
      operation_names.emplace_back(Name(operation));
    }
  }
  access.operations_text_ = absl::StrJoin(operation_names, ", ");

  if (scope.keys.size() > kMaxTokenKeyPatterns) {
    return absl::InvalidArgumentError(absl::StrCat("a token may name at most ",
                                                   kMaxTokenKeyPatterns, " key patterns, not ",
                                                   scope.keys.size()));
  }
  access.every_key_ = scope.keys.empty();
  for (const std::string& pattern : scope.keys) {
    if (pattern == "*") {
      access.every_key_ = true;
    } else if (absl::EndsWith(pattern, "*")) {
      absl::string_view prefix(pattern.data(), pattern.size() - 1);
      // A prefix is a key name's start: the same characters, one fewer at most.
      if (!ValidateKeyName(absl::StrCat(prefix, "x")).ok() || prefix.size() >= 64) {
        return BadPattern();
      }
      access.prefixes_.emplace_back(prefix);
    } else {
      if (!ValidateKeyName(pattern).ok()) return BadPattern();
      access.names_.push_back(pattern);
    }
  }
  access.keys_text_ = absl::StrJoin(scope.keys, ", ");
  return access;
}

bool TokenAccess::AllowsKey(absl::string_view key) const {
  if (every_key_) return true;
  if (std::find(names_.begin(), names_.end(), key) != names_.end()) return true;
  return std::any_of(prefixes_.begin(), prefixes_.end(),
                     [&](const std::string& p) { return absl::StartsWith(key, p); });
}

absl::Status TokenAccess::Check(Operation operation, absl::string_view key) const {
  if (operations_ != 0 && (operations_ & Bit(operation)) == 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "this token lacks the ", Name(operation), " permission (it has: ", operations_text_, ")"));
  }
  if (!AllowsKey(key)) {
    return absl::PermissionDeniedError(absl::StrCat("this token lacks permission for key \"", key,
                                                    "\" (its keys: ", keys_text_, ")"));
  }
  return absl::OkStatus();
}

}  // namespace sealbox::server
