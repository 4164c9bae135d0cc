// The command line, end to end: finds the command, parses its flags, prints help,
// runs it, and turns the outcome into stderr text and an exit code.
#ifndef SEALBOX_CLIENT_CLI_CLI_H_
#define SEALBOX_CLIENT_CLI_CLI_H_

#include <string>
#include <vector>

namespace sealbox::client {

// `args` without the program name. Returns the process exit code (outcome.h).
int RunCli(const std::vector<std::string>& args);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_CLI_H_
