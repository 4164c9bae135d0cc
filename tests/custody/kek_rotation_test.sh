#!/bin/bash
# KEK rotation while serving, with Debian's Python.
exec /usr/bin/python3 tests/custody/kek_rotation_test.py "$@"
