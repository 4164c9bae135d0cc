#!/bin/bash
# Runs the envelope-file and checksum tests of the Python example client with Debian's
# Python (python3-grpcio, python3-cryptography).
exec /usr/bin/python3 tests/e2e/envelope_test.py "$@"
