#!/bin/bash
# Builds the Go example client offline, in GOPATH mode, against Debian's Go
# packages under /usr/share/gocode. Nothing generated is checked in: the gRPC stubs
# are generated here from proto/sealbox/v1/data.proto into a scratch GOPATH, beside
# a copy of these sources:
#
#   $GOPATH_WORK/src/sealbox.example/            this folder (package main)
#   $GOPATH_WORK/src/sealbox.example/envelope/   the envelope file format
#   $GOPATH_WORK/src/sealbox.example/sealboxv1/  the stubs, generated
#
# usage: client/examples/go/build.sh [OUTPUT]   (default: ./sealbox-example)
#
# Environment: SEALBOX_PROTO_DIR (default: the project's proto/), GOPATH_WORK (the
# scratch GOPATH, default a temporary folder removed at exit), GOCACHE (Go's
# default, ~/.cache/go-build, unless set).
#
# Needs Debian's golang-go, protobuf-compiler, protoc-gen-go-1-3 (protoc-gen-go),
# protoc-gen-go-grpc, golang-google-grpc-dev and golang-github-golang-protobuf-1-3-dev
# (`tools/dev deps` installs them).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proto_dir="${SEALBOX_PROTO_DIR:-$here/../../../proto}"
output="$(realpath -m "${1:-sealbox-example}")"

for tool in go protoc protoc-gen-go protoc-gen-go-grpc; do
  if ! command -v "$tool" >/dev/null; then
    echo "build.sh: no $tool on PATH; install Debian's Go packages (tools/dev deps)" >&2
    exit 1
  fi
done

work="${GOPATH_WORK:-}"
if [[ -z "$work" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
src="$work/src/sealbox.example"
mkdir -p "$src/envelope" "$src/sealboxv1"
# -L: under Bazel the sources are symlinks into the runfiles tree.
cp -L "$here"/*.go "$src/"
cp -L "$here"/envelope/*.go "$src/envelope/"

# The messages with protoc-gen-go 1.3 (github.com/golang/protobuf, the API that
# Debian's grpc-go 1.33 and genproto use), the service with protoc-gen-go-grpc. The
# M options give the Go import paths, so the .proto files need no go_package
# (protoc-gen-go 1.3 takes the package name from import_path). Both write beside
# the .proto's path (source_relative); the files then move into the package.
package="sealbox.example/sealboxv1"
paths="paths=source_relative,Msealbox/v1/data.proto=$package"
paths+=",Mgoogle/protobuf/wrappers.proto=github.com/golang/protobuf/ptypes/wrappers"
mkdir -p "$work/gen"
protoc -I "$proto_dir" -I /usr/include \
  --go_out="$work/gen" --go_opt="$paths,import_path=$package" \
  --go-grpc_out="$work/gen" --go-grpc_opt="$paths" \
  sealbox/v1/data.proto
mv "$work"/gen/sealbox/v1/*.go "$src/sealboxv1/"

GO111MODULE=off GOPATH="$work:/usr/share/gocode" GOFLAGS= go build -o "$output" sealbox.example
