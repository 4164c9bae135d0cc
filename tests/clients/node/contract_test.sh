#!/bin/bash
# Runs the Node.js library's contract checks (contract_checks.js) with node's own test
# runner: no server and no npm package. The node binary: SEALBOX_NODE, else PATH's.
set -euo pipefail
node="${SEALBOX_NODE:-$(command -v node || echo /usr/bin/node)}"
exec "$node" --test tests/clients/node/contract_checks.js
