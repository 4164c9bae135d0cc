#!/bin/bash
# Runs the end-to-end tests with Debian's Python (python3-grpcio, python3-cryptography).
exec /usr/bin/python3 tests/e2e/e2e_test.py "$@"
