#!/bin/bash
# Runs disk_full_test.py with Debian's Python. As root, in a private mount namespace
# (unshare -m), so the tmpfs it mounts goes away with it whatever happens.
if [ "$(id -u)" = 0 ] && [ -z "${SEALBOX_PRIVATE_MOUNTS:-}" ] && command -v unshare >/dev/null; then
  export SEALBOX_PRIVATE_MOUNTS=1
  exec unshare --mount --propagation private /usr/bin/python3 tests/reliability/disk_full_test.py "$@"
fi
exec /usr/bin/python3 tests/reliability/disk_full_test.py "$@"
