// `sealbox token renew`: a tenant token's holder asks for its successor.
#ifndef SEALBOX_CLIENT_CLI_TOKEN_COMMANDS_H_
#define SEALBOX_CLIENT_CLI_TOKEN_COMMANDS_H_

#include <vector>

#include "client/cli/command.h"

namespace sealbox::client {

std::vector<Command> TokenCommands();

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_TOKEN_COMMANDS_H_
