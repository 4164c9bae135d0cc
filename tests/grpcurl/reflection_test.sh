#!/bin/bash
# Runs the reflection tests with Debian's Python (python3-grpcio, python3-grpc-tools).
exec /usr/bin/python3 tests/grpcurl/reflection_test.py "$@"
