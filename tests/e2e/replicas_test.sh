#!/bin/bash
# Two server processes on one data directory, with Debian's Python.
exec /usr/bin/python3 tests/e2e/replicas_test.py "$@"
