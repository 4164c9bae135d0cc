#!/bin/bash
# Scoped and expiring tokens on two server processes, with Debian's Python.
exec /usr/bin/python3 tests/e2e/tokens_test.py "$@"
