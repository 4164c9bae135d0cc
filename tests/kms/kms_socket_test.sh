#!/bin/bash
# Runs the KMS socket tests with Debian's Python (python3-grpcio, grpc_tools).
exec /usr/bin/python3 tests/kms/kms_socket_test.py "$@"
