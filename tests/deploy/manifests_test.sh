#!/bin/bash
# deploy/kubernetes as users apply it: every variant rendered by the real
# `kubectl kustomize` (the kustomize inside kubectl, which `kubectl apply -k` runs),
# every `kubectl apply -k` and `-f` path the docs name rendered or present, then the
# rendered objects checked by tests/deploy/validate_manifests.mjs.
set -euo pipefail
if [[ -z "${SEALBOX_DEPLOY_NODE_MODULES:-}" || ! -d "${SEALBOX_DEPLOY_NODE_MODULES}/kubernetes-models" ]]; then
  echo "SEALBOX_DEPLOY_NODE_MODULES must name tests/deploy/node_modules: run tools/dev test," \
    "or npm ci in tests/deploy and add --test_env=SEALBOX_DEPLOY_NODE_MODULES=\$PWD/tests/deploy/node_modules" >&2
  exit 1
fi
kubectl="${SEALBOX_KUBECTL:-$(command -v kubectl || true)}"
if [[ -z "$kubectl" ]]; then
  echo "kubectl not found: the manifests are checked as kubectl renders them" >&2
  exit 1
fi
echo "$("$kubectl" version --client 2>/dev/null | tr '\n' ' ')"
work="${TEST_TMPDIR:-$(mktemp -d)}"
rendered="$work/rendered"
mkdir -p "$rendered"
failed=0
# kustomize takes no symlinked kustomization.yaml ("unable to find one of
# 'kustomization.yaml'..."), and Bazel's runfiles are symlinks: render a copy, as a
# checkout has the files.
cp -rL deploy "$work/"

# Each variant: every folder with a kustomization.yaml, base included.
for kustomization in deploy/kubernetes/*/kustomization.yaml; do
  variant="$(basename "$(dirname "$kustomization")")"
  if "$kubectl" kustomize "$work/deploy/kubernetes/$variant" >"$rendered/$variant.yaml" \
    2>"$rendered/$variant.err"; then
    echo "kubectl kustomize deploy/kubernetes/$variant: $(grep -c '^kind:' "$rendered/$variant.yaml") objects"
  else
    echo "FAIL kubectl kustomize deploy/kubernetes/$variant: $(cat "$rendered/$variant.err")"
    failed=1
  fi
done
for variant in arm64 amd64 etcd; do
  [[ -s "$rendered/$variant.yaml" ]] || { echo "FAIL no $variant variant rendered"; failed=1; }
done

# What the docs and the manifests' own comments tell a user to run.
docs=(README.md docs/OPERATIONS.md deploy/kubernetes/kms/README.md deploy/kubernetes/*/*.yaml)
documented=0
while read -r option target; do
  documented=$((documented + 1))
  target="${target%/}"
  if [[ "$option" == -k ]]; then
    # One of the variants rendered above (each is rendered once).
    variant="${target#deploy/kubernetes/}"
    if [[ "$target" == "deploy/kubernetes/$variant" && -s "$rendered/$variant.yaml" ]]; then
      echo "documented: kubectl apply -k $target renders"
    else
      echo "FAIL documented kubectl apply -k $target: not a variant that renders" \
        "(deploy/kubernetes/*/kustomization.yaml)"
      failed=1
    fi
  elif [[ -f "$work/$target" ]]; then
    echo "documented: kubectl apply -f $target exists"
  else
    echo "FAIL documented kubectl apply -f $target: no such file"
    failed=1
  fi
done < <(grep -ohE 'kubectl apply (-k|-f) deploy/kubernetes[^ `)]*' "${docs[@]}" |
  sed -E 's/^kubectl apply //' | sort -u)
if ((documented < 3)); then
  echo "FAIL only $documented kubectl apply commands found in ${docs[*]}"
  failed=1
fi
((failed == 0)) || exit 1

exec "${SEALBOX_NODE:-node}" tests/deploy/validate_manifests.mjs \
  "$SEALBOX_DEPLOY_NODE_MODULES" deploy/kubernetes "$rendered"
