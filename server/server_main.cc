// sealbox-server: the API and nothing else.
#include "server/run_server.h"

int main(int argc, char** argv) { return sealbox::server::RunServer(argc, argv, {}); }
