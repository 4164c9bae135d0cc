#!/bin/bash
# Runs crash_test.py with Debian's Python (python3-grpcio, python3-grpc-tools).
exec /usr/bin/python3 tests/reliability/crash_test.py "$@"
