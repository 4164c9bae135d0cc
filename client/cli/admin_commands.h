// The admin plane: tenants, tokens and keys (service sealbox.v1.Admin).
#ifndef SEALBOX_CLIENT_CLI_ADMIN_COMMANDS_H_
#define SEALBOX_CLIENT_CLI_ADMIN_COMMANDS_H_

#include <vector>

#include "client/cli/command.h"

namespace sealbox::client {

std::vector<Command> AdminCommands();

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_ADMIN_COMMANDS_H_
