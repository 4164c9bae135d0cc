#!/bin/bash
# Runs the Go example client's end-to-end test with Debian's Python. Needs Debian's
# Go packages, which `tools/dev test` installs.
exec /usr/bin/python3 tests/e2e/go_example_test.py "$@"
