#!/bin/bash
# Runs the Python library's contract test with Debian's Python (no server).
exec /usr/bin/python3 tests/clients/python/contract_test.py "$@"
