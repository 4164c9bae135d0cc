#include "client/cli/command.h"

namespace sealbox::client {

bool Invocation::Has(const std::string& name) const {
  for (const ParsedFlag& flag : flags) {
    if (flag.spec->name == name) return true;
  }
  return false;
}

std::string Invocation::Get(const std::string& name) const {
  std::string value;
  for (const ParsedFlag& flag : flags) {
    if (flag.spec->name == name) value = flag.value;
  }
  return value;
}

}  // namespace sealbox::client
