#!/bin/sh
# Runs from the runfiles root; Debian's python3 with python3-cryptography.
exec /usr/bin/python3 tests/format/check_format_doc.py docs/FORMAT.md
