#!/bin/bash
# Runs the Node.js example client's end-to-end test with Debian's Python. Needs
# SEALBOX_NODE_MODULES (and optionally SEALBOX_NODE) from `tools/dev test`.
exec /usr/bin/python3 tests/e2e/node_example_test.py "$@"
