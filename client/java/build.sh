#!/bin/bash
# Builds the sealbox Java client library, sealbox-client.jar, offline, with Maven
# (pom.xml beside this file) against Debian's Java packages: `mvn -o` with Debian's
# /usr/share/maven-repo as the repository, so nothing is downloaded. Elsewhere, set
# SEALBOX_MAVEN_REPO to your own (~/.m2/repository) and drop -o to use Maven Central.
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
# scratch folder, default a temporary one removed at exit), SEALBOX_MAVEN_REPO
# (default /usr/share/maven-repo).
#
# Needs Debian's default-jdk-headless, protobuf-compiler,
# protobuf-compiler-grpc-java-plugin, libgrpc-java, libprotobuf-java, libnetty-java,
# libperfmark-java, libguava-java, libgoogle-gson-java and (to compile the stubs
# only: they carry @javax.annotation.Generated, which Java 11+ dropped)
# libgeronimo-annotation-1.3-spec-java; and Maven with the plugins pom.xml names:
# maven, libmaven-compiler-plugin-java, libmaven-jar-plugin-java,
# libmaven-resources-plugin-java, libsurefire-java, libbuild-helper-maven-plugin-java.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proto_dir="${SEALBOX_PROTO_DIR:-$here/../../proto}"
output="$(realpath -m "${1:-build}")"
java_dir=/usr/share/java
maven_repo="${SEALBOX_MAVEN_REPO:-/usr/share/maven-repo}"

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
for tool in mvn protoc grpc_java_plugin; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
for name in "${runtime_jars[@]}" "${compile_only_jars[@]}"; do
  [[ -f "$java_dir/$name.jar" ]] || missing+=("$java_dir/$name.jar")
done
for plugin in maven-compiler-plugin/3.10.1 maven-jar-plugin/3.3.0 maven-resources-plugin/3.3.0 \
  maven-surefire-plugin/2.22.3; do
  [[ -d "$maven_repo/org/apache/maven/plugins/$plugin" ]] || missing+=("$plugin")
done
[[ -d "$maven_repo/org/codehaus/mojo/build-helper-maven-plugin/3.3.0" ]] ||
  missing+=(build-helper-maven-plugin/3.3.0)
if ((${#missing[@]})); then
  echo "build.sh: missing ${missing[*]}; install: apt-get install default-jdk-headless" \
    "protobuf-compiler protobuf-compiler-grpc-java-plugin libgrpc-java libprotobuf-java" \
    "libnetty-java libperfmark-java libguava-java libgoogle-gson-java" \
    "libgeronimo-annotation-1.3-spec-java maven libmaven-compiler-plugin-java" \
    "libmaven-jar-plugin-java libmaven-resources-plugin-java libsurefire-java" \
    "libbuild-helper-maven-plugin-java" >&2
  exit 1
fi

classpath=""
for name in "${runtime_jars[@]}"; do classpath+="${classpath:+:}$java_dir/$name.jar"; done

work="${JAVA_WORK:-}"
if [[ -z "$work" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
rm -rf "$work/proto" "$work/gen" "$work/src" "$work/target"
mkdir -p "$work/proto/sealbox/v1" "$work/gen" "$output"

# The stubs' Java package, set on a copy of the .proto (which names none).
sed 's/^package sealbox\.v1;$/&\noption java_package = "dev.sealbox.client.proto";/' \
  "$proto_dir/sealbox/v1/data.proto" >"$work/proto/sealbox/v1/data.proto"
grep -q '^option java_package' "$work/proto/sealbox/v1/data.proto"
protoc -I "$work/proto" -I /usr/include \
  --plugin=protoc-gen-grpc-java="$(command -v grpc_java_plugin)" \
  --java_out="$work/gen" --grpc-java_out="$work/gen" \
  sealbox/v1/data.proto

# Maven builds the jar from pom.xml, offline, with Debian's Maven repository as its
# local one (read only: everything it needs is there). -L: under Bazel the sources
# are symlinks into the runfiles tree.
mkdir -p "$work/src"
cp -rL "$here/src/." "$work/src/"
cp -L "$here/pom.xml" "$work/pom.xml"
# Its output goes to stderr: stdout ends with the classpath, which callers read.
mvn -o -q -B -Dstyle.color=never -f "$work/pom.xml" -Duser.home="$work" \
  -Dmaven.repo.local="$maven_repo" -Dsealbox.stubs="$work/gen" package >&2
cp "$work/target/sealbox-client-0.1.0.jar" "$output/sealbox-client.jar"
echo "$classpath" >"$output/classpath"
echo "$output/sealbox-client.jar:$classpath"
