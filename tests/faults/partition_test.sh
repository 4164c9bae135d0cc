#!/bin/bash
# The fault scenarios, with Debian's Python (python3-grpcio). Needs root: network
# namespaces and nftables (tests/faults/netlab.py).
exec /usr/bin/python3 tests/faults/partition_test.py "$@"
