// The help texts, built from the command table so they cannot drift from it.
#ifndef SEALBOX_CLIENT_CLI_HELP_H_
#define SEALBOX_CLIENT_CLI_HELP_H_

#include <string>
#include <vector>

#include "client/cli/command.h"

namespace sealbox::client {

// `sealbox --help`: commands, global flags, transport, examples, exit codes.
std::string TopLevelHelp(const std::vector<Command>& commands);

// `sealbox admin --help`, `sealbox admin key --help`: the commands under `words`.
std::string GroupHelp(const std::vector<std::string>& words, const std::vector<Command>& commands);

// `sealbox seal --help`: usage, description, flags.
std::string CommandHelp(const Command& command);

// "sealbox admin key create TENANT KEY [--algorithm aes128|aes256]".
std::string UsageLine(const Command& command);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_HELP_H_
