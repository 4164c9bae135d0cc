#!/usr/bin/env bash
# tools/dev test fresh [COMMIT]: the README's quick start on a machine that never ran
# sealbox. A throwaway Debian 12 root (mmdebstrap minbase from Debian's archive:
# bookworm, -updates and -security, as a new Debian 12 machine has them; nothing else
# installed, HOME empty, no npm, pip, Go or Bazel cache) gets a clone of the committed
# COMMIT (default HEAD; uncommitted changes are not in it), and in it, as root:
#   1. tools/dev serve: it installs what it needs, builds, and serves; then the
#      README's first call (the commands the banner prints) must print its plaintext;
#   2. tools/dev test: the fast stage, which must end "N passed, 0 failed".
# It prints how long each took, and the install time apart from the build and tests.
# The root runs in its own mount and PID namespaces (unshare), on the host's network
# (loopback and the package registries, nothing else): the tests' network namespaces
# and servers are made inside it, and everything it started ends with it.
#
# What a new machine of ours has before anyone runs sealbox, and Debian does not
# ship, the root gets from the host: kubectl (1.32, with kustomize), Node.js 20 with
# npm (Debian 12's is 18: kubernetes-models, which the manifests test uses, wants 20 or
# later), and the machine's CA certificates with the variables that point programs at
# them (its egress to the registries is through a proxy with a CA of its own).
# Everything else comes from tools/dev's own installs; nothing sealbox made is copied.
#
# Needs root, mmdebstrap and about 10 GiB of disk (in .cache/fresh, removed after;
# SEALBOX_FRESH_KEEP=1 keeps it; SEALBOX_FRESH_DIR=DIR puts it elsewhere). 25-40
# minutes on 2 cores: the installs, an optimized build for serve, and the fast stage's
# own build and tests.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
COMMIT="$(git -C "$ROOT" rev-parse --verify "${1:-HEAD}^{commit}")"
WORK="${SEALBOX_FRESH_DIR:-$ROOT/.cache/fresh}"  # one folder per run at a time
CHROOT="$WORK/root"
LOG="$WORK/logs"

log() { printf '[fresh] %s\n' "$*" >&2; }
elapsed() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }

if [[ $(id -u) -ne 0 ]]; then
  echo "tools/dev test fresh: needs root (mmdebstrap, chroot, namespaces)" >&2
  exit 2
fi
command -v mmdebstrap >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
}
kubectl="$(readlink -f "$(command -v kubectl || true)")"
[[ -x "$kubectl" ]] || { echo "tools/dev test fresh: no kubectl on this machine to copy" >&2; exit 2; }

cleanup() {
  if [[ "${SEALBOX_FRESH_KEEP:-}" == 1 ]]; then
    log "kept: $CHROOT (logs in $LOG)"
  else
    rm -rf "$CHROOT"
  fi
}
rm -rf "$CHROOT" "$LOG"
mkdir -p "$WORK" "$LOG"
trap cleanup EXIT

started=$SECONDS
log "making a Debian 12 root in $CHROOT (mmdebstrap minbase)"
mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$CHROOT" \
  "deb http://deb.debian.org/debian bookworm main" \
  "deb http://deb.debian.org/debian bookworm-updates main" \
  "deb http://deb.debian.org/debian-security bookworm-security main" >&2
install -m 0755 "$kubectl" "$CHROOT/usr/local/bin/kubectl"
cp -a /usr/local/share/ca-certificates/. "$CHROOT/usr/local/share/ca-certificates/"
chroot "$CHROOT" update-ca-certificates >/dev/null 2>&1
if [[ -x /usr/bin/node && -d /usr/lib/node_modules/npm ]]; then
  install -m 0755 /usr/bin/node "$CHROOT/usr/bin/node"
  mkdir -p "$CHROOT/usr/lib/node_modules" "$CHROOT/usr/etc"
  cp -a /usr/lib/node_modules/npm "$CHROOT/usr/lib/node_modules/"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$CHROOT/usr/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$CHROOT/usr/bin/npx"
  [[ ! -e /usr/etc/npmrc ]] || cp /usr/etc/npmrc "$CHROOT/usr/etc/npmrc"
fi
# The machine's variables naming its CA bundle (CI runs with them too).
ca_env=()
for name in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE REQUESTS_CA_BUNDLE \
  PIP_CERT GIT_SSL_CAINFO; do
  [[ -z "${!name:-}" ]] || ca_env+=("$name=${!name}")
done
git clone --quiet --no-local "$ROOT" "$CHROOT/work/sealbox"
git -C "$CHROOT/work/sealbox" checkout --quiet --detach "$COMMIT"
root_made=$((SECONDS - started))

# What runs inside: the README's two commands, each timed, with its output in
# /logs (the host's $LOG). Exits non-zero when either fails.
cat >"$CHROOT/quick-start.sh" <<'INSIDE'
#!/bin/bash
set -uo pipefail
cd /work/sealbox
# 1. tools/dev serve, until its banner; then the banner's first call.
started=$SECONDS
tools/dev serve >/logs/serve.log 2>&1 &
serve=$!
for _ in $(seq 3600); do
  grep -q 'sealbox is running in DEV MODE' /logs/serve.log && break
  kill -0 "$serve" 2>/dev/null || break
  sleep 1
done
echo "serve_seconds=$((SECONDS - started))"
if ! grep -q 'sealbox is running in DEV MODE' /logs/serve.log; then
  echo "serve_result=tools/dev serve did not start (the end of /logs/serve.log follows)"
  tail -30 /logs/serve.log
  exit 1
fi
first_call="$(sed -n 's/^  \(export PATH=.*\)$/\1/p; s/^  \(echo .* | sealbox seal .*\)$/\1/p; s/^  \(sealbox open .*\)$/\1/p' /logs/serve.log)"
printf '%s\n' "$first_call" >/logs/first-call.sh
opened="$(bash -euo pipefail /logs/first-call.sh 2>&1)"
kill "$serve"
wait "$serve" 2>/dev/null
echo "first_call=$opened"
[[ "$opened" == "hello, sealbox" ]] || exit 1
# 2. tools/dev test.
started=$SECONDS
tools/dev test >/logs/test.log 2>&1
rc=$?
echo "test_seconds=$((SECONDS - started))"
echo "test_result=$(tail -1 /logs/test.log)"
echo "fast_line=$(grep -m1 '^fast: ' /logs/test.log)"
grep -E '^//[^ ]+ +(FAILED|TIMEOUT|NO STATUS|FLAKY|INCOMPLETE)' /logs/test.log
exit $rc
INSIDE
chmod 0755 "$CHROOT/quick-start.sh"
mkdir -p "$CHROOT/logs"

log "running the README's quick start in it (commit ${COMMIT:0:12}; logs in $LOG)"
rc=0
unshare --mount --pid --fork --propagation private bash -euo pipefail -c '
  root="$1" logs="$2"
  shift 2
  # The root a mount point of its own, as / is on a machine: `ip netns` makes / a
  # slave mount, which fails on a plain folder.
  mount --bind "$root" "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs tmpfs "$root/run"
  mount --bind "$logs" "$root/logs"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@" \
    /quick-start.sh' fresh "$CHROOT" "$LOG" "${ca_env[@]}" >"$LOG/summary" 2>&1 || rc=$?
cat "$LOG/summary" >&2

value() { sed -n "s/^$1=//p" "$LOG/summary" | head -1; }
# The installs, from the log lines tools/dev writes for them (apt and npm).
installs=0
for seconds in $(cat "$LOG"/serve.log "$LOG"/test.log 2>/dev/null |
  sed -n 's/^\[dev\] installed .* in \([0-9]*\) s$/\1/p'); do
  installs=$((installs + seconds))
done
echo "fresh machine (Debian 12 minbase, HOME empty, no caches), commit ${COMMIT:0:12}:"
echo "  root made:      $(elapsed "$root_made") (mmdebstrap, clone)"
echo "  tools/dev serve: $(elapsed "$(value serve_seconds)") to serving, installs included;" \
  "first call: $(value first_call)"
echo "  tools/dev test:  $(elapsed "$(value test_seconds)"); $(value fast_line)"
echo "  installs (apt, npm): $(elapsed "$installs") of the above"
echo "  result: $(value test_result)"
exit "$rc"
