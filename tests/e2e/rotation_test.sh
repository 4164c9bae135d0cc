#!/bin/bash
# Automatic rotation on three server processes, with Debian's Python.
exec /usr/bin/python3 tests/e2e/rotation_test.py "$@"
