// `sealbox health`: the gRPC health check, for people and for Kubernetes probes
// (the container image runs it as its exec probe; it speaks TLS like every command).
#ifndef SEALBOX_CLIENT_CLI_HEALTH_COMMAND_H_
#define SEALBOX_CLIENT_CLI_HEALTH_COMMAND_H_

#include "client/cli/command.h"

namespace sealbox::client {

Command HealthCommand();

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_HEALTH_COMMAND_H_
