#!/bin/bash
# valgrind's memcheck for an AArch64 program on an x86-64 machine: Debian's arm64
# valgrind, from the arm64 sysroot (tools/dev sysroot), run under qemu-aarch64.
# The `valgrind` launcher cannot be used: it execs the tool binary directly, which
# would not go through QEMU, so this starts the tool the way the launcher would.
# The program must be linked dynamically against the sysroot (a static glibc gives
# false reports). Usage: valgrind_under_qemu.sh [valgrind options] PROGRAM [ARGS]
set -euo pipefail
sysroot="${SEALBOX_ARM64_SYSROOT:?set SEALBOX_ARM64_SYSROOT to the arm64 sysroot}"
tool="$sysroot/usr/libexec/valgrind/memcheck-arm64-linux"
if [[ ! -x "$tool" ]]; then
  echo "valgrind_under_qemu: no arm64 valgrind in $sysroot (tools/dev sysroot)" >&2
  exit 1
fi
export VALGRIND_LAUNCHER="$sysroot/usr/bin/valgrind"
export VALGRIND_LIB="$sysroot/usr/libexec/valgrind"
exec /usr/bin/qemu-aarch64 -L "$sysroot" "$tool" "$@"
