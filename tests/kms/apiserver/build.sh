#!/bin/bash
# Builds apiserver-standin offline, in GOPATH mode, against Debian's Go packages
# (grpc-go 1.33, golang/protobuf 1.3, x/crypto), as client/examples/go/build.sh
# builds the Go example: the stubs of proto/k8s/kms/v2/kms.proto (the plugin API) and
# proto/sealbox/v1/data.proto (bench's unary baseline over TCP) are generated into a
# scratch GOPATH beside a copy of these sources.
#
# usage: tests/kms/apiserver/build.sh OUTPUT
# Environment: SEALBOX_PROTO_DIR (default: the project's proto/), GOCACHE.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proto_dir="${SEALBOX_PROTO_DIR:-$here/../../../proto}"
output="$(realpath -m "$1")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

src="$work/src/apiserver.standin"
mkdir -p "$src/kmsv2" "$src/sealboxv1" "$work/gen"
cp -L "$here"/*.go "$src/"
package="apiserver.standin/kmsv2"
paths="paths=source_relative,Mk8s/kms/v2/kms.proto=$package"
protoc -I "$proto_dir" \
  --go_out="$work/gen" --go_opt="$paths,import_path=$package" \
  --go-grpc_out="$work/gen" --go-grpc_opt="$paths" \
  k8s/kms/v2/kms.proto
mv "$work"/gen/k8s/kms/v2/*.go "$src/kmsv2/"
package="apiserver.standin/sealboxv1"
paths="paths=source_relative,Msealbox/v1/data.proto=$package"
paths+=",Mgoogle/protobuf/wrappers.proto=github.com/golang/protobuf/ptypes/wrappers"
protoc -I "$proto_dir" -I /usr/include \
  --go_out="$work/gen" --go_opt="$paths,import_path=$package" \
  --go-grpc_out="$work/gen" --go-grpc_opt="$paths" \
  sealbox/v1/data.proto
mv "$work"/gen/sealbox/v1/*.go "$src/sealboxv1/"
GO111MODULE=off GOPATH="$work:/usr/share/gocode" GOFLAGS= go build -o "$output" apiserver.standin
