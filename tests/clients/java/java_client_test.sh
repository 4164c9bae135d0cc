#!/bin/bash
# Runs the Java client library's end-to-end test with Debian's Python. Needs Debian's
# Java packages (client/java/build.sh lists them).
exec /usr/bin/python3 tests/clients/java/java_client_test.py "$@"
