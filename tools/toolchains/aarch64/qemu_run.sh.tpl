#!/bin/bash
# Runs an AArch64 test binary under QEMU user mode (`--run_under` of
# --config=aarch64 in .bazelrc). -L makes QEMU load the binary's dynamic loader and
# shared libraries (libc, libstdc++, libcrypto, ...) from the arm64 sysroot; files
# not found there, such as the test's own outputs, come from the host as usual.
# QEMU_CPU in the environment picks the CPU model (default `max`).
# The sysroot path is filled in by the genrule `qemu_run_script`.
sysroot="@SYSROOT@"
if [[ ! -x "$sysroot/lib/ld-linux-aarch64.so.1" ]]; then
  echo "qemu_run: no arm64 sysroot at $sysroot; run: tools/dev sysroot" >&2
  exit 1
fi
exec /usr/bin/qemu-aarch64 -L "$sysroot" "$@"
