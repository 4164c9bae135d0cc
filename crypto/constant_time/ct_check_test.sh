#!/bin/bash
# The constant-time check: runs ct_check under valgrind's memcheck with secrets
# marked undefined. Implementations claimed constant time must produce no report;
# the `table` implementation must be reported, which shows the check can fail.
set -u
ct_check="$1"
shift
if ! command -v valgrind >/dev/null; then
  echo "FAIL: valgrind is not installed (tools/dev test installs it)" >&2
  exit 1
fi

failures=0
run() {  # run IMPL EXPECTATION
  local impl="$1" expect="$2" log
  log="$(mktemp)"
  valgrind --quiet --error-exitcode=99 --track-origins=yes \
    "$ct_check" "$impl" >"$log" 2>&1
  local rc=$?
  if [[ "$expect" == clean && $rc -eq 0 ]]; then
    echo "PASS: $impl: no secret-dependent branch or memory index"
  elif [[ "$expect" == reported && $rc -eq 99 ]] &&
       grep -q "uninitialised value" "$log"; then
    echo "PASS: $impl: secret-dependent accesses reported, as expected"
  else
    echo "FAIL: $impl: expected $expect, valgrind exit $rc" >&2
    head -60 "$log" >&2
    failures=$((failures + 1))
  fi
  rm -f "$log"
}

for arg in "$@"; do
  run "${arg%%=*}" "${arg#*=}"
done
exit $((failures > 0))
