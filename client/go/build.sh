#!/bin/bash
# Installs the sealbox Go client library into a GOPATH, with its gRPC stubs
# generated from proto/sealbox/v1/data.proto (nothing generated is checked in),
# then builds and vets it; --test also runs its unit tests (no server needed), the
# contract test among them (client/contract, copied into testdata/).
# Offline, in GOPATH mode, against Debian's Go packages under /usr/share/gocode.
#
#   GOPATH_DIR/src/sealbox.dev/go/sealbox/                      this folder
#   GOPATH_DIR/src/sealbox.dev/go/sealbox/internal/sealboxv1/   the stubs, generated
#
# usage: client/go/build.sh [--test] GOPATH_DIR
#        client/go/build.sh --module [--test] MODULE_DIR
#
# Then build against it with
#   GO111MODULE=off GOPATH=GOPATH_DIR:/usr/share/gocode go build ...
#
# --module lays the library out as the Go module its go.mod names, in MODULE_DIR,
# with the stubs generated inside it and a vendor/ folder whose modules are links to
# Debian's sources under /usr/share/gocode (vendor/modules.txt written from go.mod's
# requirements), then builds, vets and (--test) tests it in module mode, offline:
# GOFLAGS=-mod=vendor GOPROXY=off. With the module proxy, `go mod tidy` in that
# folder (without vendor/) fetches the same modules instead.
# Environment: SEALBOX_PROTO_DIR (default: the project's proto/), GOCACHE (Go's
# default, ~/.cache/go-build, unless set).
#
# Needs Debian's golang-go, protobuf-compiler, protoc-gen-go-1-3 (protoc-gen-go),
# protoc-gen-go-grpc, golang-google-grpc-dev, golang-google-genproto-dev and
# golang-github-golang-protobuf-1-3-dev (`tools/dev deps` installs them).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proto_dir="${SEALBOX_PROTO_DIR:-$here/../../proto}"
test=false
module=false
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --test) test=true ;;
    --module) module=true ;;
    *) break ;;
  esac
  shift
done
if [[ $# -ne 1 ]]; then
  echo "usage: $0 [--test] GOPATH_DIR, or $0 --module [--test] MODULE_DIR" >&2
  exit 2
fi
gopath="$(realpath -m "$1")"

for tool in go protoc protoc-gen-go protoc-gen-go-grpc; do
  if ! command -v "$tool" >/dev/null; then
    echo "build.sh: no $tool on PATH; install Debian's Go packages (tools/dev deps)" >&2
    exit 1
  fi
done

package="sealbox.dev/go/sealbox"
src="$gopath/src/$package"
if $module; then
  src="$gopath" # the module's root
fi
rm -rf "$src"
mkdir -p "$src/internal/sealboxv1"
# -L: under Bazel the sources are symlinks into the runfiles tree.
cp -L "$here"/*.go "$src/"
if $test; then
  # The client contract and its vectors, which contract_test.go checks the library
  # against (testdata/ is not part of the package).
  mkdir -p "$src/testdata"
  cp -rL "$here/../contract" "$src/testdata/contract"
fi
# The module's requirements (GOPATH mode ignores them).
cp -L "$here/go.mod" "$src/go.mod"

# The messages with protoc-gen-go 1.3 (github.com/golang/protobuf, the API that
# Debian's grpc-go 1.33 and genproto use), the service with protoc-gen-go-grpc. The
# M options give the Go import paths, so the .proto files need no go_package
# (protoc-gen-go 1.3 takes the package name from import_path).
stubs="$package/internal/sealboxv1"
paths="paths=source_relative,Msealbox/v1/data.proto=$stubs"
paths+=",Mgoogle/protobuf/wrappers.proto=github.com/golang/protobuf/ptypes/wrappers"
paths+=",Mgoogle/protobuf/duration.proto=github.com/golang/protobuf/ptypes/duration"
paths+=",Mgoogle/protobuf/timestamp.proto=github.com/golang/protobuf/ptypes/timestamp"
gen="$(mktemp -d)"
trap 'rm -rf "$gen"' EXIT
protoc -I "$proto_dir" -I /usr/include \
  --go_out="$gen" --go_opt="$paths,import_path=sealboxv1" \
  --go-grpc_out="$gen" --go-grpc_opt="$paths" \
  sealbox/v1/data.proto
mv "$gen"/sealbox/v1/*.go "$src/internal/sealboxv1/"

if $module; then
  # Which packages of each required module the library and its tests import, asked in
  # GOPATH mode (a link makes the module folder a GOPATH package) before vendor/ exists.
  lookup="$(mktemp -d)"
  mkdir -p "$lookup/src/sealbox.dev/go"
  ln -s "$src" "$lookup/src/$package"
  imports="$(GO111MODULE=off GOPATH="$lookup:/usr/share/gocode" GOFLAGS= go list -deps -test \
    -f '{{if not .Standard}}{{.ImportPath}}{{end}}' "$package")"
  rm -rf "$lookup"
  mkdir -p "$src/vendor"
  # vendor/modules.txt: each requirement of go.mod, its Go version from its own go.mod,
  # and the packages used; vendor/<module> a link to Debian's copy.
  while read -r path version; do
    debian="/usr/share/gocode/src/$path"
    [[ -d "$debian" ]] || { echo "build.sh: $path: no $debian (tools/dev deps)" >&2; exit 1; }
    mkdir -p "$src/vendor/$(dirname "$path")"
    ln -s "$debian" "$src/vendor/$path"
    go_version="$(awk '$1 == "go" { print $2 }' "$debian/go.mod" 2>/dev/null || true)"
    echo "# $path $version"
    echo "## explicit${go_version:+; go $go_version}"
    grep -E "^$path(/|\$)" <<<"$imports" | sort -u || true
  done < <(awk '/^require/ { inside = 1; next } inside && /^\)/ { inside = 0 }
                inside && NF >= 2 { print $1, $2 }' "$src/go.mod") >"$src/vendor/modules.txt.new"
  mv "$src/vendor/modules.txt.new" "$src/vendor/modules.txt"
  cd "$src"
  export GO111MODULE=on GOFLAGS=-mod=vendor GOPROXY=off
  go build ./...
  go vet ./...
  if $test; then
    go test -vet=off . # vetted above, with every check
  fi
  exit 0
fi

export GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOFLAGS=
go build "$package"
go vet "$package"
if $test; then
  go test -vet=off "$package" # vetted above, with every check
fi
