#!/bin/bash
# Builds the Go example, a short user of the sealbox Go library, offline in
# GOPATH mode: client/go/build.sh installs the library (and its generated stubs)
# into the GOPATH, main.go goes beside it as the package sealbox-example.
#
# usage: client/examples/go/build.sh [OUTPUT]   (default: ./sealbox-example)
#
# Environment: GOPATH_WORK (the GOPATH, default a temporary folder removed at
# exit), GOCACHE (Go's default, ~/.cache/go-build, unless set).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
output="$(realpath -m "${1:-sealbox-example}")"
work="${GOPATH_WORK:-}"
if [[ -z "$work" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
"$here/../../go/build.sh" "$work"
mkdir -p "$work/src/sealbox-example"
cp -L "$here/main.go" "$work/src/sealbox-example/"
export GO111MODULE=off GOPATH="$work:/usr/share/gocode" GOFLAGS=
go vet sealbox-example
go build -o "$output" sealbox-example
