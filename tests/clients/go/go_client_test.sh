#!/bin/bash
# Runs the Go client library's end-to-end test with Debian's Python. Needs Debian's
# Go packages, which `tools/dev test` installs.
exec /usr/bin/python3 tests/clients/go/go_client_test.py "$@"
