#!/bin/bash
# The constant-time check: runs ct_check under valgrind's memcheck with secrets
# marked undefined. Arguments: CT_CHECK CT_CHECK_EARLY_EXIT_TAG_COMPARE, then
# IMPL=clean, IMPL=reported or IMPL+CONTROL=reported. Implementations claimed
# constant time must produce no report; `table` must be reported, and so must every
# control, which together show the check can fail:
#   IMPL+leak                     a branch on IMPL's AES-GCM output
#   IMPL+subkey_leak              a branch on a tag whose only secret is the unary
#                                 format's key material (through HKDF)
#   IMPL+early_exit_tag_compare   IMPL under the mode layer with an early-exit tag
#                                 compare (the second binary)
#
# SEALBOX_VALGRIND names the memcheck command (default: valgrind); tools/dev sets it
# to valgrind_under_qemu.sh to run an AArch64 ct_check under the arm64 valgrind.
set -u
if [[ $# -lt 2 ]]; then
  echo "usage: $0 CT_CHECK CT_CHECK_EARLY_EXIT_TAG_COMPARE IMPL[+CONTROL]=EXPECT..." >&2
  exit 2
fi
ct_check="$1"
ct_check_early_exit="$2"
shift 2
valgrind_cmd="${SEALBOX_VALGRIND:-valgrind}"
if ! command -v "$valgrind_cmd" >/dev/null; then
  echo "FAIL: $valgrind_cmd is not installed (tools/dev test installs it)" >&2
  exit 1
fi

failures=0
run() {  # run IMPL[+CONTROL] EXPECTATION
  local impl="${1%%+*}" control="" expect="$2" binary="$ct_check" args log
  [[ "$1" == *+* ]] && control="${1#*+}"
  args=("$impl")
  case "$control" in
    "") ;;
    early_exit_tag_compare) binary="$ct_check_early_exit" ;;
    *) args+=("$control") ;;
  esac
  log="$(mktemp)"
  "$valgrind_cmd" --quiet --error-exitcode=99 --track-origins=yes \
    "$binary" "${args[@]}" >"$log" 2>&1
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
