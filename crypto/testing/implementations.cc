#include "crypto/testing/implementations.h"

#include <cctype>

#include "crypto/dispatch/dispatch.h"

namespace sealbox::crypto::test {

std::vector<std::string> ImplementationsUnderTest() { return SupportedImplementations(); }

std::string ImplementationTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace sealbox::crypto::test
