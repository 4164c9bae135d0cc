// sealbox-server: the API and nothing else (server/process/run_server.h).
#include "server/process/run_server.h"

int main(int argc, char** argv) { return sealbox::server::RunServer(argc, argv, {}); }
