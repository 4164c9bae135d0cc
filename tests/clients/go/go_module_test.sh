#!/bin/bash
# Runs the "As a Go module" command of docs/clients/GO.md (client/go/build.sh --module
# --test) offline, with HOME and GOCACHE in TEST_TMPDIR; passes if the library's unit
# and contract tests pass ("ok  sealbox.dev/go/sealbox").
set -euo pipefail
guide=docs/clients/GO.md
command="$(awk '/^```sh$/ { block = ""; inside = 1; next }
                /^```$/ { if (inside && block ~ /--module/) print block; inside = 0; next }
                inside { block = block $0 "\n" }' "$guide")"
if [[ -z "$command" ]]; then
  echo "go_module_test: no sh block with --module in $guide" >&2
  exit 1
fi
home="${TEST_TMPDIR:-$(mktemp -d)}"
# tools/dev's shared Go cache when it passes one (Go's cache takes concurrent builds;
# the module build's entries are its own, as no compiled package is shared with the
# GOPATH builds), so a second run compiles nothing.
export HOME="$home" GOCACHE="${SEALBOX_GOCACHE:-$home/gocache}" PATH=/usr/bin:/bin GOFLAGS=
echo "go_module_test: $command"
out="$(bash -euo pipefail -c "$command" 2>&1)" || { echo "$out"; exit 1; }
echo "$out"
grep -q $'^ok  \tsealbox.dev/go/sealbox' <<<"$out"
