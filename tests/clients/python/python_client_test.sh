#!/bin/bash
# Runs the Python client library's end-to-end tests with Debian's Python.
exec /usr/bin/python3 tests/clients/python/python_client_test.py "$@"
