// The main of tests compiled together (tools/build/unity.bzl). One binary holds the
// tests of every file in a package; a test target names its own file in
// SEALBOX_TEST_SOURCE and this runs only the tests defined there, found by the file
// gtest records for each. SEALBOX_TEST_SOURCES lists the files the package's targets
// run, so that a test defined anywhere else (a header, say) fails loudly instead of
// never running. A filter given to gtest (--test_filter, --gtest_filter) is used as
// it is, across all the files.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace {

// "Suite.Test:Suite.Test..." for the tests defined in `source`; empty if none, or if
// a test is defined in none of `sources` (which it reports).
std::string FilterForSource(const std::string& source, const std::set<std::string>& sources) {
  std::string filter;
  const testing::UnitTest& all = *testing::UnitTest::GetInstance();
  for (int i = 0; i < all.total_test_suite_count(); ++i) {
    const testing::TestSuite& suite = *all.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const testing::TestInfo& test = *suite.GetTestInfo(j);
      if (sources.count(test.file()) == 0) {
        std::fprintf(stderr, "test_main: %s.%s is defined in %s, which no test target runs\n",
                     suite.name(), test.name(), test.file());
        return "";
      }
      if (source != test.file()) continue;
      if (!filter.empty()) filter += ':';
      filter += std::string(suite.name()) + "." + test.name();
    }
  }
  if (filter.empty()) std::fprintf(stderr, "test_main: no test is defined in %s\n", source.c_str());
  return filter;
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const char* source = std::getenv("SEALBOX_TEST_SOURCE");
  const char* sources = std::getenv("SEALBOX_TEST_SOURCES");
  if (source != nullptr && sources != nullptr && testing::GTEST_FLAG(filter) == "*") {
    std::set<std::string> files;
    std::istringstream words(sources);
    for (std::string file; words >> file;) files.insert(file);
    const std::string filter = FilterForSource(source, files);
    if (filter.empty()) return 1;
    testing::GTEST_FLAG(filter) = filter;
  }
  return RUN_ALL_TESTS();
}
