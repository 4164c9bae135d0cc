// Global options: where the server is, how to reach it, who is calling. Set from
// the environment first, then from flags, which may appear anywhere on the line.
#ifndef SEALBOX_CLIENT_CLI_OPTIONS_H_
#define SEALBOX_CLIENT_CLI_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "client/cli/args.h"
#include "client/cli/outcome.h"

namespace sealbox::client {

inline constexpr char kDefaultServer[] = "127.0.0.1:50051";

struct GlobalOptions {
  std::string server = kDefaultServer;  // --server, SEALBOX_SERVER
  std::string token;                    // --token, SEALBOX_TOKEN
  std::string tls_ca;                   // PEM file paths
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;
  bool insecure = false;
  std::optional<double> timeout_seconds;
  bool json = false;
};

// The global flags, in the order --help lists them.
const std::vector<FlagSpec>& GlobalFlags();

// Defaults, overridden by SEALBOX_SERVER and SEALBOX_TOKEN when set.
GlobalOptions OptionsFromEnvironment();

// Sets the option named by `flag` (one of GlobalFlags()).
Outcome ApplyGlobalFlag(const ParsedFlag& flag, GlobalOptions& options);

// Checks the options together: a parsable server, a usable token, TLS flags that fit.
Outcome ValidateOptions(const GlobalOptions& options);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_OPTIONS_H_
