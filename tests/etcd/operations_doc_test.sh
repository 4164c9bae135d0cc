#!/bin/bash
# docs/OPERATIONS.md's etcd quick start, run as written (Debian's Python and etcd).
exec /usr/bin/python3 tests/etcd/operations_doc_test.py "$@"
