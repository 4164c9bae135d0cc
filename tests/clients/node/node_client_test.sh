#!/bin/bash
# Runs the Node.js client library's end-to-end test with Debian's Python. Needs
# SEALBOX_NODE_CLIENT_MODULES (client/node's node_modules) and optionally SEALBOX_NODE.
exec /usr/bin/python3 tests/clients/node/node_client_test.py "$@"
