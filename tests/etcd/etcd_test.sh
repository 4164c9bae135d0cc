#!/bin/bash
# sealbox replicas on a real etcd, with Debian's Python (python3-grpcio).
exec /usr/bin/python3 tests/etcd/etcd_test.py "$@"
