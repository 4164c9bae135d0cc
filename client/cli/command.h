// A command of the CLI: its words ("admin key create"), what it takes, its help,
// and the function that runs it. Each command file returns a list of these.
#ifndef SEALBOX_CLIENT_CLI_COMMAND_H_
#define SEALBOX_CLIENT_CLI_COMMAND_H_

#include <functional>
#include <string>
#include <vector>

#include "client/cli/args.h"
#include "client/cli/options.h"
#include "client/cli/outcome.h"

namespace sealbox::client {

// One run of a command, with its arguments parsed.
struct Invocation {
  GlobalOptions global;
  std::vector<std::string> args;  // positional arguments after the command words
  std::vector<ParsedFlag> flags;  // the command's own flags

  // Whether flag `name` ("--key") was given; the last value given.
  bool Has(const std::string& name) const;
  std::string Get(const std::string& name) const;
};

struct Command {
  std::vector<std::string> words;  // {"admin", "key", "create"}
  std::string synopsis;            // what follows the words in "Usage:", e.g. "TENANT KEY"
  std::string summary;             // one line, for command lists
  std::string help;                // paragraphs for `--help`; may be empty
  std::vector<FlagSpec> flags;
  size_t min_args = 0;
  size_t max_args = 0;
  std::function<Outcome(const Invocation&)> run;
};

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_COMMAND_H_
