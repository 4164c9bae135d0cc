#!/bin/bash
# Runs the envelope-file and checksum tests of the Python client library with Debian's
# Python (python3-grpcio, python3-cryptography).
exec /usr/bin/python3 tests/clients/python/envelope_test.py "$@"
