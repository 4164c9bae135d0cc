// Which AES-GCM implementations a test runs over: every one this CPU supports, so a
// single parameterized suite checks them all.
//
//   class MyTest : public ::testing::TestWithParam<std::string> {};
//   INSTANTIATE_TEST_SUITE_P(Impl, MyTest,
//                            ::testing::ValuesIn(test::ImplementationsUnderTest()),
//                            test::ImplementationTestName);
//
// Test names end in the implementation ("Impl/MyTest.Case/table"), so
// --gtest_filter='*/table' runs one.
#ifndef SEALBOX_CRYPTO_TESTING_IMPLEMENTATIONS_H_
#define SEALBOX_CRYPTO_TESTING_IMPLEMENTATIONS_H_

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sealbox::crypto::test {

// crypto::SupportedImplementations(): the names this CPU runs, best first.
std::vector<std::string> ImplementationsUnderTest();

// The implementation name as a GoogleTest parameter name (letters, digits, '_').
std::string ImplementationTestName(const ::testing::TestParamInfo<std::string>& info);

}  // namespace sealbox::crypto::test

#endif  // SEALBOX_CRYPTO_TESTING_IMPLEMENTATIONS_H_
