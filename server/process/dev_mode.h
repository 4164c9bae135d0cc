// `--dev`: everything a new user needs for a first call, generated on first start
// and reused afterwards: a data directory under the working folder, a KEK file, an
// admin token, and a tenant `demo` with a key `default` and a token.
#ifndef SEALBOX_SERVER_PROCESS_DEV_MODE_H_
#define SEALBOX_SERVER_PROCESS_DEV_MODE_H_

#include <string>

#include "absl/status/status.h"
#include "server/process/server_config.h"

namespace sealbox::server {

inline constexpr char kDevDataDir[] = ".sealbox-dev";

// Fills `config` for dev mode (loopback listen, data dir, KEK, admin token),
// creating the files that do not exist yet.
absl::Status PrepareDevConfig(ServerConfig& config);

// Once the server runs: creates the demo tenant, key and token if missing, and
// prints how to make a first call.
absl::Status SetUpDemoTenant(const std::string& admin_token, int port);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_DEV_MODE_H_
