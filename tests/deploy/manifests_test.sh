#!/bin/bash
# Validates deploy/kubernetes with tests/deploy/validate_manifests.mjs.
set -euo pipefail
if [[ -z "${SEALBOX_DEPLOY_NODE_MODULES:-}" || ! -d "${SEALBOX_DEPLOY_NODE_MODULES}/kubernetes-models" ]]; then
  echo "SEALBOX_DEPLOY_NODE_MODULES must name tests/deploy/node_modules: run tools/dev test," \
    "or npm ci in tests/deploy and add --test_env=SEALBOX_DEPLOY_NODE_MODULES=\$PWD/tests/deploy/node_modules" >&2
  exit 1
fi
exec "${SEALBOX_NODE:-node}" tests/deploy/validate_manifests.mjs \
  "$SEALBOX_DEPLOY_NODE_MODULES" deploy/kubernetes
