#!/bin/bash
# Compiles ContractChecks.java over the library jar //client/examples/java:jars built,
# and runs it against client/contract (no server): "N passed, M failed".
set -euo pipefail
jars=client/examples/java
classpath="$jars/sealbox-client.jar:$(cat "$jars/classpath")"
classes="${TEST_TMPDIR:-$(mktemp -d)}/contract-classes"
javac --release 17 -d "$classes" -cp "$classpath" tests/clients/java/ContractChecks.java
exec java -XX:TieredStopAtLevel=1 -Xshare:auto -cp "$classes:$classpath" \
  dev.sealbox.client.ContractChecks client/contract
