#!/bin/bash
# The constant-time check: runs ct_check under valgrind's memcheck with secrets
# marked undefined. Arguments: CT_CHECK then IMPL=clean, IMPL=reported or
# IMPL+leak=reported. Implementations claimed constant time must produce no report;
# `table` must be reported, and so must IMPL+leak (a deliberate branch on IMPL's
# output), which together show the check can fail.
#
# SEALBOX_VALGRIND names the memcheck command (default: valgrind); tools/dev sets it
# to valgrind_under_qemu.sh to run an AArch64 ct_check under the arm64 valgrind.
set -u
ct_check="$1"
shift
valgrind_cmd="${SEALBOX_VALGRIND:-valgrind}"
if ! command -v "$valgrind_cmd" >/dev/null; then
  echo "FAIL: $valgrind_cmd is not installed (tools/dev test installs it)" >&2
  exit 1
fi

failures=0
run() {  # run IMPL[+leak] EXPECTATION
  local impl="${1%+leak}" expect="$2" mode=() log
  [[ "$1" == *+leak ]] && mode=(leak)
  log="$(mktemp)"
  "$valgrind_cmd" --quiet --error-exitcode=99 --track-origins=yes \
    "$ct_check" "$impl" "${mode[@]}" >"$log" 2>&1
  local rc=$?
  if [[ "$expect" == clean && $rc -eq 0 ]]; then
    echo "PASS: $1: no secret-dependent branch or memory index"
  elif [[ "$expect" == reported && $rc -eq 99 ]] &&
       grep -q "uninitialised value" "$log"; then
    echo "PASS: $1: secret-dependent accesses reported, as expected"
  else
    echo "FAIL: $1: expected $expect, valgrind exit $rc" >&2
    head -60 "$log" >&2
    failures=$((failures + 1))
  fi
  rm -f "$log"
}

for arg in "$@"; do
  run "${arg%%=*}" "${arg#*=}"
done
exit $((failures > 0))
