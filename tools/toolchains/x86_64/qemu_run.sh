#!/bin/bash
# Runs an x86-64 test binary under QEMU user mode on an emulated CPU model
# (`--run_under` of --config=x86_64_qemu in .bazelrc), so one x86-64 machine checks
# the implementation chosen on CPUs without AES-NI, without AVX, without VAES.
# QEMU_CPU in the environment names the model (`qemu-x86_64 -cpu help` lists them).
# It must be set: without it QEMU would quietly emulate its default, qemu64.
# The binary and its shared libraries are the host's, the same ones the host's own
# test run used; QEMU only changes which instructions execute and what cpuid says.
if [[ -z "${QEMU_CPU:-}" ]]; then
  echo "qemu_run: set QEMU_CPU to a CPU model, e.g. --test_env=QEMU_CPU=Westmere" >&2
  exit 1
fi
# glibc picks its string functions (memcpy, memcmp, ...) by cpuid as well, and on
# the AVX2 models its AVX2 ones, slow to emulate, made the tests twice as slow. Its
# SSE2 ones do the same work, and sealbox's own detection reads cpuid, not glibc.
export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.cpu.hwcaps=-AVX2,-AVX_Fast_Unaligned_Load"
exec /usr/bin/qemu-x86_64 -cpu "$QEMU_CPU" "$@"
