#!/bin/bash
# Builds the sealbox Java client library, sealbox-client.jar, offline, with javac and
# jar against Debian's Java packages (no Maven, no Gradle, nothing downloaded).
# Nothing generated is checked in: the gRPC stubs are generated here, into a scratch
# folder, from proto/sealbox/v1/data.proto, under the Java package
# dev.sealbox.client.proto (set on a copy of the .proto), so they cannot clash with
# sealbox.v1 stubs an application generates for itself. They are internal: the
# library's API speaks byte[] and its own types.
#
# usage: client/java/build.sh [OUTPUT_DIR]   (default: ./build)
#   writes OUTPUT_DIR/sealbox-client.jar and OUTPUT_DIR/classpath (the runtime
#   classpath a program needs beside the jar, one line), and prints the classpath.
#
# Environment: SEALBOX_PROTO_DIR (default: the project's proto/), JAVA_WORK (the
# scratch folder, default a temporary one removed at exit).
#
# Needs Debian's default-jdk-headless, protobuf-compiler,
# protobuf-compiler-grpc-java-plugin, libgrpc-java, libprotobuf-java, libnetty-java,
# libperfmark-java, libguava-java, libgoogle-gson-java and (to compile the stubs
# only: they carry @javax.annotation.Generated, which Java 11+ dropped)
# libgeronimo-annotation-1.3-spec-java.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proto_dir="${SEALBOX_PROTO_DIR:-$here/../../proto}"
output="$(realpath -m "${1:-build}")"
java_dir=/usr/share/java

# What a program needs at run time beside sealbox-client.jar: gRPC over Netty, and
# what gRPC itself loads (Guava, perfmark, Gson for service configs).
runtime_jars=(
  grpc-api grpc-context grpc-core grpc-netty grpc-protobuf grpc-protobuf-lite grpc-stub
  protobuf guava perfmark-api gson
  netty-buffer netty-codec netty-codec-http netty-codec-http2 netty-codec-socks
  netty-common netty-handler netty-handler-proxy netty-resolver netty-transport
)
compile_only_jars=(geronimo-annotation-1.3-spec)

missing=()
for tool in javac jar protoc grpc_java_plugin; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
for name in "${runtime_jars[@]}" "${compile_only_jars[@]}"; do
  [[ -f "$java_dir/$name.jar" ]] || missing+=("$java_dir/$name.jar")
done
if ((${#missing[@]})); then
  echo "build.sh: missing ${missing[*]}; install: apt-get install default-jdk-headless" \
    "protobuf-compiler protobuf-compiler-grpc-java-plugin libgrpc-java libprotobuf-java" \
    "libnetty-java libperfmark-java libguava-java libgoogle-gson-java" \
    "libgeronimo-annotation-1.3-spec-java" >&2
  exit 1
fi

classpath=""
for name in "${runtime_jars[@]}"; do classpath+="${classpath:+:}$java_dir/$name.jar"; done

work="${JAVA_WORK:-}"
if [[ -z "$work" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
rm -rf "$work/proto" "$work/gen" "$work/classes"
mkdir -p "$work/proto/sealbox/v1" "$work/gen" "$work/classes" "$output"

# The stubs' Java package, set on a copy of the .proto (which names none).
sed 's/^package sealbox\.v1;$/&\noption java_package = "dev.sealbox.client.proto";/' \
  "$proto_dir/sealbox/v1/data.proto" >"$work/proto/sealbox/v1/data.proto"
grep -q '^option java_package' "$work/proto/sealbox/v1/data.proto"
protoc -I "$work/proto" -I /usr/include \
  --plugin=protoc-gen-grpc-java="$(command -v grpc_java_plugin)" \
  --java_out="$work/gen" --grpc-java_out="$work/gen" \
  sealbox/v1/data.proto

# -L: under Bazel the sources are symlinks into the runfiles tree.
mkdir -p "$work/src"
cp -rL "$here/src/." "$work/src/"
javac --release 17 -encoding UTF-8 -nowarn -Xlint:none -d "$work/classes" \
  -cp "$classpath:$java_dir/${compile_only_jars[0]}.jar" \
  $(find "$work/gen" "$work/src" -name '*.java')
jar --create --file "$output/sealbox-client.jar" -C "$work/classes" .
echo "$classpath" >"$output/classpath"
echo "$output/sealbox-client.jar:$classpath"
