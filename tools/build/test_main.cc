// The main of tests compiled together (tools/build/unity.bzl). One binary holds the
// tests of several files; a test target names its own in SEALBOX_TEST_SOURCE, and
// this runs only the tests defined there, found by the file gtest records for each.
// kUnityTestSources lists every file compiled into the binary, so that a test
// defined anywhere else (a header, say), which no target would run, fails loudly. A
// filter given to gtest (--test_filter, --gtest_filter) is used as it is, across all
// the files.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

// Written by unity.bzl into the library's one translation unit.
extern const char kUnityTestSources[];

namespace {

std::set<std::string> Words(const char* text) {
  std::set<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.insert(word);
  return words;
}

// "Suite.Test:Suite.Test..." for the tests defined in `mine`; empty, with the reason
// on stderr, if there are none or a test is defined outside `compiled`.
std::string FilterFor(const std::set<std::string>& mine, const std::set<std::string>& compiled) {
  std::string filter;
  const testing::UnitTest& all = *testing::UnitTest::GetInstance();
  for (int i = 0; i < all.total_test_suite_count(); ++i) {
    const testing::TestSuite& suite = *all.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const testing::TestInfo& test = *suite.GetTestInfo(j);
      if (compiled.count(test.file()) == 0) {
        std::fprintf(stderr, "test_main: %s.%s is defined in %s, which no test target runs\n",
                     suite.name(), test.name(), test.file());
        return "";
      }
      if (mine.count(test.file()) == 0) continue;
      if (!filter.empty()) filter += ':';
      filter += std::string(suite.name()) + "." + test.name();
    }
  }
  if (filter.empty()) std::fprintf(stderr, "test_main: no test is defined in the test's files\n");
  return filter;
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const char* mine = std::getenv("SEALBOX_TEST_SOURCE");
  if (mine != nullptr && testing::GTEST_FLAG(filter) == "*") {
    const std::string filter = FilterFor(Words(mine), Words(kUnityTestSources));
    if (filter.empty()) return 1;
    testing::GTEST_FLAG(filter) = filter;
  }
  return RUN_ALL_TESTS();
}
