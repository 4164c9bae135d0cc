// sealbox: the command-line client of the sealbox service. `sealbox --help`.
#include <string>
#include <vector>

#include "client/cli.h"

int main(int argc, char** argv) {
  return sealbox::client::RunCli(std::vector<std::string>(argv + 1, argv + argc));
}
