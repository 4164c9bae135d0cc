#!/bin/bash
# test_main.cc on a real unity test binary (crypto/dispatch's two files in one): a
# target runs only its own file's tests, a file with none is an error, a gtest filter
# reaches across the files, and without a file named every test runs.
set -euo pipefail
binary=crypto/dispatch/dispatch_test
listed() { "$binary" --gtest_list_tests | grep -v '^ ' | tr -d '.' | sort | tr '\n' ' '; }

got=$(SEALBOX_TEST_SOURCE=crypto/dispatch/dispatch_test.cc listed)
[[ "$got" == "DispatchTest " ]] || { echo "dispatch_test.cc's target listed: $got" >&2; exit 1; }
got=$(SEALBOX_TEST_SOURCE=crypto/dispatch/default_choice_test.cc listed)
[[ "$got" == "DefaultChoiceTest " ]] || { echo "default_choice_test.cc's target listed: $got" >&2; exit 1; }
got=$(env -u SEALBOX_TEST_SOURCE bash -c "$(declare -f listed); binary=$binary; listed")
[[ "$got" == "DefaultChoiceTest DispatchTest " ]] || { echo "no file named listed: $got" >&2; exit 1; }
got=$(SEALBOX_TEST_SOURCE=crypto/dispatch/dispatch_test.cc GTEST_FILTER='DefaultChoiceTest.*' listed)
[[ "$got" == "DefaultChoiceTest " ]] || { echo "a filter listed: $got" >&2; exit 1; }

if message=$(SEALBOX_TEST_SOURCE=crypto/dispatch/elsewhere.cc "$binary" 2>&1); then
  echo "a file without tests passed: $message" >&2
  exit 1
fi
[[ "$message" == *"no test is defined"* ]] || { echo "a file without tests said: $message" >&2; exit 1; }
echo "PASS: each target runs its own file's tests"
