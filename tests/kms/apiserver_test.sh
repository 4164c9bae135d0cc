#!/bin/bash
# Runs the stand-in's tests with Debian's Python; needs Debian's Go packages, which
# `tools/dev test` installs.
exec /usr/bin/python3 tests/kms/apiserver_test.py "$@"
