// The whole of sealbox-server's main: flags in, the server run until SIGTERM or
// SIGINT, an exit code out. A binary that serves more than the API (the benchmark
// server, with its Echo baseline) is this plus its own services.
#ifndef SEALBOX_SERVER_PROCESS_RUN_SERVER_H_
#define SEALBOX_SERVER_PROCESS_RUN_SERVER_H_

#include <vector>

#include "grpcpp/impl/codegen/service_type.h"

namespace sealbox::server {

// Parses sealbox-server's flags from argv and serves until told to stop.
// `extra_services` are registered beside the API (SealboxServer::Start); the caller
// owns them for the whole call.
int RunServer(int argc, char** argv, const std::vector<grpc::Service*>& extra_services);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_RUN_SERVER_H_
