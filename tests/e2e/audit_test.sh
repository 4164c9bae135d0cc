#!/bin/bash
# The audit log of a real server process, with Debian's Python.
exec /usr/bin/python3 tests/e2e/audit_test.py "$@"
