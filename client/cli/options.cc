#include "client/cli/options.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/cli/server_address.h"

namespace sealbox::client {

const std::vector<FlagSpec>& GlobalFlags() {
  static const auto* flags = new std::vector<FlagSpec>{
      {"--server", "", "HOST:PORT",
       absl::StrCat("server address, also [IPV6]:PORT or unix:PATH (env SEALBOX_SERVER; "
                    "default ",
                    kDefaultServer, ")")},
      {"--token", "", "TOKEN",
       "bearer token: a tenant token for data commands, the admin token for admin "
       "(env SEALBOX_TOKEN, which keeps it out of the process list)"},
      {"--tls-ca", "", "FILE", "PEM roots to verify the server with (default: system roots)"},
      {"--tls-cert", "", "FILE", "PEM client certificate chain, for mutual TLS (with --tls-key)"},
      {"--tls-key", "", "FILE", "PEM private key of --tls-cert"},
      {"--tls-server-name", "", "NAME",
       "name to verify in the server certificate, if not the host"},
      {"--insecure", "", "",
       "plaintext even to a non-loopback server (loopback is always plaintext unless --tls-* is "
       "given)"},
      {"--timeout", "", "SECONDS",
       "deadline per call (default 30 for unary and admin calls, none for streams)"},
      {"--json", "", "", "admin commands: print the response as JSON"},
  };
  return *flags;
}

GlobalOptions OptionsFromEnvironment() {
  GlobalOptions options;
  if (const char* server = std::getenv("SEALBOX_SERVER"); server && *server) {
    options.server = server;
  }
  if (const char* token = std::getenv("SEALBOX_TOKEN"); token && *token) {
    options.token = token;
  }
  return options;
}

Outcome ApplyGlobalFlag(const ParsedFlag& flag, GlobalOptions& options) {
  const std::string& name = flag.spec->name;
  const std::string& value = flag.value;
  if (name == "--server") {
    options.server = value;
  } else if (name == "--token") {
    options.token = value;
  } else if (name == "--tls-ca") {
    options.tls_ca = value;
  } else if (name == "--tls-cert") {
    options.tls_cert = value;
  } else if (name == "--tls-key") {
    options.tls_key = value;
  } else if (name == "--tls-server-name") {
    options.tls_server_name = value;
  } else if (name == "--insecure") {
    options.insecure = true;
  } else if (name == "--json") {
    options.json = true;
  } else if (name == "--timeout") {
    double seconds = 0;
    if (!absl::SimpleAtod(value, &seconds) || !std::isfinite(seconds) || seconds <= 0 ||
        seconds > 365 * 24 * 3600) {
      return Outcome::Usage(
          absl::StrCat("--timeout must be a positive number of seconds, not '", value, "'"));
    }
    options.timeout_seconds = seconds;
  } else {
    return Outcome::Usage(absl::StrCat("unknown flag '", name, "'"));
  }
  return Outcome::Ok();
}

Outcome ValidateOptions(const GlobalOptions& options) {
  if (absl::StatusOr<ServerAddress> address = ParseServerAddress(options.server); !address.ok()) {
    return Outcome::Usage(std::string(address.status().message()));
  }
  // A header value must be visible ASCII; a stray newline from a file is the usual slip.
  for (char c : options.token) {
    if (c < 0x21 || c > 0x7e) {
      return Outcome::Usage("the token holds a space, newline or non-ASCII character");
    }
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return Outcome::Usage("--tls-cert and --tls-key go together");
  }
  bool tls_flags =
      !options.tls_ca.empty() || !options.tls_cert.empty() || !options.tls_server_name.empty();
  if (options.insecure && tls_flags) {
    return Outcome::Usage("--insecure cannot be combined with --tls-* flags");
  }
  return Outcome::Ok();
}

}  // namespace sealbox::client
