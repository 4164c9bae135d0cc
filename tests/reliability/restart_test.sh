#!/bin/bash
# Runs restart_test.py with Debian's Python (python3-grpcio, python3-grpc-tools).
exec /usr/bin/python3 tests/reliability/restart_test.py "$@"
