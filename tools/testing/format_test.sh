#!/usr/bin/env bash
# tools/format --check passes a file in .clang-format's style, names and fails a
# misformatted one, and tools/format makes that one pass. (The fast stage runs the
# check over the whole tree; this proves the check can fail.)
set -euo pipefail
format="$1"
style="$2"
work="$TEST_TMPDIR/tree"
mkdir -p "$work"
cp "$style" "$work/.clang-format"

cat >"$work/good.cc" <<'CC'
#include <cstdint>

int Add(int a, int b) { return a + b; }
CC
printf '#include <cstdint>\n\nint   Add(int a,int b){return a+b;}\n' >"$work/bad.cc"

"$format" --check "$work/good.cc" || { echo "FAIL: a well-formatted file was refused"; exit 1; }
if out="$("$format" --check "$work/good.cc" "$work/bad.cc")"; then
  echo "FAIL: a misformatted file passed the check"
  exit 1
fi
[[ "$out" == *"misformatted: $work/bad.cc"* ]] || { echo "FAIL: not named: $out"; exit 1; }
[[ "$out" != *good.cc* ]] || { echo "FAIL: the good file was named: $out"; exit 1; }

"$format" "$work/bad.cc"
"$format" --check "$work/bad.cc" || { echo "FAIL: still misformatted after tools/format"; exit 1; }
grep -qx 'int Add(int a, int b) { return a + b; }' "$work/bad.cc" || { echo "FAIL: not fixed"; exit 1; }
echo "PASS"
