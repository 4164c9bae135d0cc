#include "client/cli/args.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sealbox::client {

bool LooksLikeFlag(const std::string& arg) { return arg.size() > 1 && arg[0] == '-'; }

Outcome ConsumeFlag(absl::Span<const std::string> args, size_t* index,
                    absl::Span<const FlagSpec* const> specs, ParsedFlag& out) {
  const std::string& arg = args[*index];
  std::string name = arg;
  std::string inline_value;
  bool has_inline_value = false;
  if (absl::StartsWith(arg, "--")) {
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
      has_inline_value = true;
    }
  }
  const FlagSpec* spec = nullptr;
  for (const FlagSpec* candidate : specs) {
    if (name == candidate->name ||
        (!candidate->short_name.empty() && name == candidate->short_name)) {
      spec = candidate;
      break;
    }
  }
  if (spec == nullptr) return Outcome::Usage(absl::StrCat("unknown flag '", name, "'"));
  ++*index;
  out.spec = spec;
  out.value.clear();
  if (spec->value_name.empty()) {
    if (has_inline_value) {
      return Outcome::Usage(absl::StrCat(spec->name, " takes no value"));
    }
    return Outcome::Ok();
  }
  if (has_inline_value) {
    out.value = inline_value;
  } else if (*index < args.size()) {
    out.value = args[(*index)++];
  } else {
    return Outcome::Usage(absl::StrCat(spec->name, " needs a value (", spec->value_name, ")"));
  }
  return Outcome::Ok();
}

Outcome ParseArgs(absl::Span<const std::string> args, absl::Span<const FlagSpec* const> specs,
                  ParsedArgs& out) {
  size_t i = 0;
  while (i < args.size()) {
    const std::string& arg = args[i];
    if (arg == "--") {
      out.positional.insert(out.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      ++i;
      continue;
    }
    if (!LooksLikeFlag(arg)) {
      out.positional.push_back(arg);
      ++i;
      continue;
    }
    ParsedFlag flag;
    Outcome parsed = ConsumeFlag(args, &i, specs, flag);
    if (!parsed.ok()) return parsed;
    out.flags.push_back(std::move(flag));
  }
  return Outcome::Ok();
}

}  // namespace sealbox::client
