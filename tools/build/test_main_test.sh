#!/bin/bash
# test_main.cc on a real unity test binary (crypto/dispatch's two files in one): a
# target runs only its own file's tests, without a file named every test runs, a
# gtest filter reaches across the files, and a file with none is an error.
set -euo pipefail
binary=crypto/dispatch/dispatch_test

# expect_suites WANT [VAR=VALUE...]: the binary, run with that environment, lists the
# suites WANT (sorted, each followed by a space).
expect_suites() {
  local want=$1 got
  shift
  got=$(env -u SEALBOX_TEST_SOURCE "$@" "$binary" --gtest_list_tests |
    grep -v '^ ' | tr -d '.' | sort | tr '\n' ' ')
  [[ "$got" == "$want" ]] || { echo "with ${*:-nothing set}: listed '$got', not '$want'" >&2; exit 1; }
}
expect_suites "DispatchTest " SEALBOX_TEST_SOURCE=crypto/dispatch/dispatch_test.cc
expect_suites "DefaultChoiceTest " SEALBOX_TEST_SOURCE=crypto/dispatch/default_choice_test.cc
expect_suites "DefaultChoiceTest DispatchTest "
expect_suites "DefaultChoiceTest " SEALBOX_TEST_SOURCE=crypto/dispatch/dispatch_test.cc \
  GTEST_FILTER='DefaultChoiceTest.*'

if message=$(SEALBOX_TEST_SOURCE=crypto/dispatch/elsewhere.cc "$binary" 2>&1); then
  echo "a file without tests passed: $message" >&2
  exit 1
fi
[[ "$message" == *"no test is defined"* ]] || { echo "a file without tests said: $message" >&2; exit 1; }
echo "PASS: each target runs its own file's tests"
