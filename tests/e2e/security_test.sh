#!/bin/bash
# Security and abuse hardening, end to end, with Debian's Python (python3-grpcio).
exec /usr/bin/python3 tests/e2e/security_test.py "$@"
