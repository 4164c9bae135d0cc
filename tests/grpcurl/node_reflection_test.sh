#!/bin/bash
# Runs the npm reflection client's test with Debian's Python. Needs
# SEALBOX_REFLECTION_NODE_MODULES (and optionally SEALBOX_NODE) from `tools/dev test`.
exec /usr/bin/python3 tests/grpcurl/node_reflection_test.py "$@"
