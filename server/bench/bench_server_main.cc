// sealbox-bench-server: sealbox-server (the same flags) plus sealbox.bench.Echo, the
// gRPC baseline that `tools/dev bench service` measures the data plane against.
// Never deployed: the production binary, //server:sealbox-server, has no Echo.
#include "server/bench/echo_service.h"
#include "server/process/run_server.h"

int main(int argc, char** argv) {
  sealbox::server::bench::EchoService echo;
  return sealbox::server::RunServer(argc, argv, {&echo});
}
