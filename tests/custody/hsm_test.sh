#!/bin/bash
# The KEK sealed by a real HSM (SoftHSM2), with Debian's Python and PyKCS11.
exec /usr/bin/python3 tests/custody/hsm_test.py "$@"
