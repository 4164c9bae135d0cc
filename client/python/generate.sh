#!/bin/bash
# Regenerates the package's gRPC stubs (sealbox/v1/data_pb2*.py) from the project's
# proto/ with Debian's python3-grpc-tools. They are checked in, so that the package
# installs without protoc; //tests/clients/python:python_client_test fails when they
# differ from what this script writes.
#
# usage: client/python/generate.sh [OUTPUT_DIR]   (default: client/python)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here}"
mkdir -p "$out/sealbox/v1"
/usr/bin/python3 -m grpc_tools.protoc -I "$here/../../proto" --python_out="$out" \
  --grpc_python_out="$out" "$here/../../proto/sealbox/v1/data.proto"
