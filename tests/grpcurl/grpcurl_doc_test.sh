#!/bin/bash
# Runs docs/GRPCURL.md's commands with Debian's Python, bash, jq and coreutils.
exec /usr/bin/python3 tests/grpcurl/grpcurl_doc_test.py "$@"
