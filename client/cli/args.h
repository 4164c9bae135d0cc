// Command-line parsing: flags and positional arguments, nothing else. Which flags a
// command takes is declared beside the command (FlagSpec); this file only matches.
#ifndef SEALBOX_CLIENT_CLI_ARGS_H_
#define SEALBOX_CLIENT_CLI_ARGS_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "client/cli/outcome.h"

namespace sealbox::client {

struct FlagSpec {
  std::string name;        // "--key"
  std::string short_name;  // "-i", or empty
  std::string value_name;  // "NAME" in the help; empty for a switch
  std::string help;        // one line
};

struct ParsedFlag {
  const FlagSpec* spec = nullptr;
  std::string value;  // empty for a switch
};

struct ParsedArgs {
  std::vector<std::string> positional;
  std::vector<ParsedFlag> flags;  // in command-line order
  bool help = false;              // -h or --help was given
};

// True for "--x", "-x" and "--x=v"; false for "-" (stdin/stdout) and plain words.
bool LooksLikeFlag(const std::string& arg);

// Reads the flag at args[*index] and its value ("--name VALUE", "--name=VALUE",
// "-i VALUE", or a switch), advancing *index past both.
Outcome ConsumeFlag(absl::Span<const std::string> args, size_t* index,
                    absl::Span<const FlagSpec* const> specs, ParsedFlag& out);

// Parses flags and positional arguments, which may be interleaved; "--" ends the
// flags. "-h"/"--help" set `help` and are accepted everywhere.
Outcome ParseArgs(absl::Span<const std::string> args, absl::Span<const FlagSpec* const> specs,
                  ParsedArgs& out);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_ARGS_H_
