#include "client/cli/cli.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/admin_commands.h"
#include "client/cli/command.h"
#include "client/cli/data_commands.h"
#include "client/cli/health_command.h"
#include "client/cli/help.h"
#include "client/cli/options.h"
#include "client/cli/token_commands.h"

namespace sealbox::client {
namespace {

std::vector<Command> AllCommands() {
  std::vector<Command> commands = DataCommands();
  for (Command& command : TokenCommands()) commands.push_back(std::move(command));
  for (Command& command : AdminCommands()) commands.push_back(std::move(command));
  commands.push_back(HealthCommand());
  return commands;
}

bool AnyStartsWith(const std::vector<Command>& commands, const std::vector<std::string>& words) {
  return std::any_of(commands.begin(), commands.end(), [&](const Command& command) {
    return command.words.size() >= words.size() &&
           std::equal(words.begin(), words.end(), command.words.begin());
  });
}

const Command* FindExact(const std::vector<Command>& commands,
                         const std::vector<std::string>& words) {
  for (const Command& command : commands) {
    if (command.words == words) return &command;
  }
  return nullptr;
}

void Print(std::FILE* stream, const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stream);
}

bool AsksForHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "-h" || arg == "--help") return true;
  }
  return false;
}

// Everything but printing the final error. `words` receives the command words
// recognised, for the usage hint.
Outcome Run(const std::vector<std::string>& args, const std::vector<Command>& commands,
            std::vector<std::string>& words) {
  std::vector<const FlagSpec*> global_specs;
  for (const FlagSpec& spec : GlobalFlags()) global_specs.push_back(&spec);
  std::vector<ParsedFlag> flags;
  bool help = false;

  // The command words, with global flags allowed before and between them.
  const Command* command = nullptr;
  size_t i = 0;
  while (i < args.size() && command == nullptr) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      help = true;
      ++i;
    } else if (LooksLikeFlag(arg)) {
      ParsedFlag flag;
      if (Outcome parsed = ConsumeFlag(args, &i, global_specs, flag); !parsed.ok()) {
        return parsed;
      }
      flags.push_back(std::move(flag));
    } else if (words.empty() && arg == "help") {
      help = true;  // "sealbox help admin key"
      ++i;
    } else {
      words.push_back(arg);
      ++i;
      if (!AnyStartsWith(commands, words)) {
        words.pop_back();
        return Outcome::Usage(absl::StrCat("unknown command '", absl::StrJoin(words, " "),
                                           words.empty() ? "" : " ", arg, "'"));
      }
      command = FindExact(commands, words);
    }
  }
  if (command == nullptr) {
    if (help) {
      Print(stdout, words.empty() ? TopLevelHelp(commands) : GroupHelp(words, commands));
      return Outcome::Ok();
    }
    if (words.empty()) {
      Print(stderr, TopLevelHelp(commands));
      return Outcome::Usage("missing command");
    }
    Print(stderr, GroupHelp(words, commands));
    return Outcome::Usage(
        absl::StrCat("'sealbox ", absl::StrJoin(words, " "), "' needs one of the commands above"));
  }

  std::vector<std::string> rest(args.begin() + i, args.end());
  if (help || AsksForHelp(rest)) {
    Print(stdout, CommandHelp(*command));
    return Outcome::Ok();
  }
  std::vector<const FlagSpec*> specs = global_specs;
  for (const FlagSpec& spec : command->flags) specs.push_back(&spec);
  ParsedArgs parsed;
  if (Outcome outcome = ParseArgs(rest, specs, parsed); !outcome.ok()) return outcome;

  Invocation invocation{OptionsFromEnvironment(), std::move(parsed.positional), {}};
  flags.insert(flags.end(), parsed.flags.begin(), parsed.flags.end());
  const std::set<const FlagSpec*> globals(global_specs.begin(), global_specs.end());
  for (ParsedFlag& flag : flags) {
    if (globals.count(flag.spec) == 0) {
      invocation.flags.push_back(std::move(flag));
    } else if (Outcome applied = ApplyGlobalFlag(flag, invocation.global); !applied.ok()) {
      return applied;
    }
  }
  if (invocation.args.size() < command->min_args) {
    return Outcome::Usage(absl::StrCat("missing arguments; usage: ", UsageLine(*command)));
  }
  if (invocation.args.size() > command->max_args) {
    return Outcome::Usage(
        absl::StrCat("unexpected argument '", invocation.args[command->max_args], "'"));
  }
  if (Outcome valid = ValidateOptions(invocation.global); !valid.ok()) return valid;
  return command->run(invocation);
}

}  // namespace

int RunCli(const std::vector<std::string>& args) {
  const std::vector<Command> commands = AllCommands();
  std::vector<std::string> words;
  Outcome outcome = Run(args, commands, words);
  if (outcome.ok()) return kExitOk;
  std::fprintf(stderr, "sealbox: %s\n", outcome.message().c_str());
  if (outcome.exit_code() == kExitUsage) {
    std::fprintf(stderr, "Run 'sealbox%s%s --help' for usage.\n", words.empty() ? "" : " ",
                 absl::StrJoin(words, " ").c_str());
  }
  return outcome.exit_code();
}

}  // namespace sealbox::client
