// The data plane: seal, open, rewrap (service sealbox.v1.Crypto).
#ifndef SEALBOX_CLIENT_CLI_DATA_COMMANDS_H_
#define SEALBOX_CLIENT_CLI_DATA_COMMANDS_H_

#include <vector>

#include "client/cli/command.h"

namespace sealbox::client {

std::vector<Command> DataCommands();

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_DATA_COMMANDS_H_
