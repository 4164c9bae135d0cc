#!/bin/bash
# Keys in and out only wrapped, with Debian's Python, openssl and python3-cryptography.
exec /usr/bin/python3 tests/custody/key_transfer_test.py "$@"
