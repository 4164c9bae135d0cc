#!/bin/bash
# Runs the cross-language matrix with Debian's Python.
exec /usr/bin/python3 tests/clients/matrix_test.py "$@"
