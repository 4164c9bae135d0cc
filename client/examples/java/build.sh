#!/bin/bash
# Builds the Java example client: the library (client/java/build.sh), then
# SealboxExample.java against it, and a launcher script.
#
# usage: client/examples/java/build.sh [OUTPUT_DIR]   (default: ./build)
#   writes OUTPUT_DIR/sealbox-client.jar, OUTPUT_DIR/classes/ and
#   OUTPUT_DIR/sealbox-example, which runs the example:
#     SEALBOX_TOKEN=... OUTPUT_DIR/sealbox-example seal --key default IN OUT
#   (JAVA_OPTS, e.g. -Xmx64m, is passed to the JVM).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
output="$(realpath -m "${1:-build}")"
classpath="$(bash "$here/../../java/build.sh" "$output" | tail -1)"
mkdir -p "$output/classes"
javac --release 17 -encoding UTF-8 -d "$output/classes" -cp "$classpath" \
  "$here/SealboxExample.java"
cat >"$output/sealbox-example" <<LAUNCHER
#!/bin/sh
exec java \${JAVA_OPTS:-} -cp "$output/classes:$classpath" SealboxExample "\$@"
LAUNCHER
chmod +x "$output/sealbox-example"
echo "$output/sealbox-example"
