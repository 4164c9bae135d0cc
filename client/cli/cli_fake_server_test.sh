#!/usr/bin/env bash
# The sealbox CLI against a fake server (testing/fake_server.cc): which RPC each
# input takes, streaming round trips, format detection, atomic output, exit codes,
# admin output and --json, TLS. The fake's "cipher" is a toy; only shapes matter.
set -uo pipefail

RUNFILES="${TEST_SRCDIR:-}/${TEST_WORKSPACE:-sealbox}"
SEALBOX="$RUNFILES/client/sealbox"
FAKE="$RUNFILES/client/cli/testing/fake_server"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/sealbox_fake.XXXXXX")"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT

FAILURES=0
fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }

# start_fake NAME [CERT KEY]: starts a fake server, sets PORT.
start_fake() {
  local name="$1"; shift
  "$FAKE" "$TMP/$name.port" "$@" 2>"$TMP/$name.log" &
  PIDS+=($!)
  for _ in $(seq 100); do
    [[ -s "$TMP/$name.port" ]] && break
    sleep 0.1
  done
  PORT="$(cat "$TMP/$name.port" 2>/dev/null)" || { echo "fake server did not start" >&2; exit 1; }
}

# expect CODE DESCRIPTION -- ARGS...: as in cli_usage_test.sh; stdin from $STDIN.
expect() {
  local want="$1" what="$2"; shift 3
  "$SEALBOX" "$@" <"${STDIN:-/dev/null}" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [[ $got -ne $want ]]; then
    fail "$what: exit $got, want $want (sealbox $*)"
    sed 's/^/  stderr: /' "$TMP/err" >&2
  fi
}
out_has() { grep -qF -- "$1" "$TMP/out" || { fail "stdout lacks '$1'"; cat "$TMP/out" >&2; }; }
err_has() { grep -qF -- "$1" "$TMP/err" || { fail "stderr lacks '$1'"; cat "$TMP/err" >&2; }; }
first_byte() { head -c1 "$1" | od -An -tx1 | tr -d ' \n'; }
same() { cmp -s "$1" "$2" || fail "$3: $1 and $2 differ"; }

start_fake plain
export SEALBOX_SERVER="127.0.0.1:$PORT" SEALBOX_TOKEN=tenant-token

# --- unary ------------------------------------------------------------------------
printf 'hello' >"$TMP/hello"
STDIN="$TMP/hello" expect 0 "seal small stdin" -- seal --key k --aad ctx
cp "$TMP/out" "$TMP/hello.sealed"
[[ "$(first_byte "$TMP/hello.sealed")" == 01 ]] || fail "small input not sealed unary"
expect 0 "open unary" -- open --key k --aad ctx -i "$TMP/hello.sealed"
same "$TMP/out" "$TMP/hello" "unary round trip"
printf ctx >"$TMP/aad"
expect 0 "open with --aad-file" -- open --key k --aad-file "$TMP/aad" -i "$TMP/hello.sealed"
expect 3 "wrong aad" -- open --key k --aad other -i "$TMP/hello.sealed" -o "$TMP/opened"
err_has "sealbox: open: INVALID_ARGUMENT: decryption failed"
[[ -e "$TMP/opened" ]] && fail "failed open created its output"
expect 0 "rewrap" -- rewrap --key k --aad ctx -i "$TMP/hello.sealed" -o "$TMP/rewrapped"
same "$TMP/rewrapped" "$TMP/hello.sealed" "rewrap output"
: >"$TMP/empty"
expect 0 "seal empty" -- seal --key k -i "$TMP/empty" -o "$TMP/empty.sealed"
expect 0 "open empty" -- open --key k -i "$TMP/empty.sealed"
[[ -s "$TMP/out" ]] && fail "empty input did not open to nothing"

# --- checksums: the fake answers as the server does (verified only what was sent) ----
for cmd in seal open rewrap; do
  input="$TMP/hello.sealed"; [[ $cmd == seal ]] && input="$TMP/hello"
  expect 1 "$cmd answer corrupted in transit" -- $cmd --key corrupt --aad ctx -i "$input" -o "$TMP/x"
  err_has "sealbox: $cmd: the answer was corrupted in transit (CRC32C"
  err_has "nothing was written"
  [[ -e "$TMP/x" ]] && fail "$cmd wrote a corrupted answer"
  expect 1 "$cmd checksums unconfirmed" -- $cmd --key unchecked --aad ctx -i "$input" -o "$TMP/x"
  err_has "sealbox: $cmd: the server did not confirm the request's CRC32C checksums"
  [[ -e "$TMP/x" ]] && fail "$cmd wrote an unconfirmed answer"
done

# --- unary or stream, by size -------------------------------------------------------
head -c 1048575 /dev/urandom >"$TMP/under"   # 1 MiB - 1
head -c 1048576 /dev/urandom >"$TMP/at"      # 1 MiB
head -c 3000001 /dev/urandom >"$TMP/big"
expect 0 "seal file under 1 MiB" -- seal --key k -i "$TMP/under" -o "$TMP/under.sealed"
[[ "$(first_byte "$TMP/under.sealed")" == 01 ]] || fail "file under 1 MiB not unary"
cat "$TMP/under" | "$SEALBOX" seal --key k >"$TMP/under.piped.sealed" || fail "seal piped small"
[[ "$(first_byte "$TMP/under.piped.sealed")" == 01 ]] || fail "stdin under 1 MiB not unary"
cat "$TMP/at" | "$SEALBOX" seal --key k >"$TMP/at.piped.sealed" || fail "seal piped 1 MiB"
[[ "$(first_byte "$TMP/at.piped.sealed")" == 02 ]] || fail "stdin of 1 MiB not streamed"
expect 0 "open piped 1 MiB" -- open --key k -i "$TMP/at.piped.sealed" -o "$TMP/at.opened"
same "$TMP/at.opened" "$TMP/at" "1 MiB stdin round trip"
expect 0 "seal big file" -- seal --key k --aad big -i "$TMP/big" -o "$TMP/big.sealed"
[[ "$(first_byte "$TMP/big.sealed")" == 02 ]] || fail "big file not streamed"
cat "$TMP/big.sealed" | "$SEALBOX" open --key k --aad big >"$TMP/big.opened" || fail "open piped stream"
same "$TMP/big.opened" "$TMP/big" "big round trip"
expect 0 "seal --stream" -- seal --stream --key k -i "$TMP/hello" -o "$TMP/hello.stream"
[[ "$(first_byte "$TMP/hello.stream")" == 02 ]] || fail "--stream did not stream"
expect 0 "seal --segment-size" -- seal --segment-size 4096 --key k -i "$TMP/hello" -o "$TMP/seg"
[[ "$(first_byte "$TMP/seg")" == 02 ]] || fail "--segment-size did not stream"
expect 0 "open small stream" -- open --key k -i "$TMP/hello.stream"
same "$TMP/out" "$TMP/hello" "small stream round trip"
expect 1 "rewrap of a stream" -- rewrap --key k -i "$TMP/hello.stream" -o "$TMP/x"

# --- a stream that fails after plaintext went out ------------------------------------
head -c -1 "$TMP/big.sealed" >"$TMP/truncated.sealed"
expect 3 "truncated stream to a file" -- open --key k --aad big -i "$TMP/truncated.sealed" -o "$TMP/t.out"
err_has "sealbox: open: INVALID_ARGUMENT: decryption failed"
[[ -e "$TMP/t.out" ]] && fail "truncated stream left its output"
compgen -G "$TMP/.*.sealbox-*" >/dev/null && fail "truncated stream left a temporary file"
printf 'old' >"$TMP/t.keep"
expect 3 "truncated stream over a file" -- open --key k --aad big -i "$TMP/truncated.sealed" -o "$TMP/t.keep"
[[ "$(cat "$TMP/t.keep")" == old ]] || fail "truncated stream replaced an existing file"
expect 3 "truncated stream to stdout" -- open --key k --aad big -i "$TMP/truncated.sealed"

# --- output files: atomic replacement, modes and symlinks are unit-tested
# (output_test); here, that a command writes through them.
printf 'old' >"$TMP/mode"
expect 0 "overwrite a file" -- open --key k --aad ctx -i "$TMP/hello.sealed" -o "$TMP/mode"
same "$TMP/mode" "$TMP/hello" "overwritten file"

# --- exit codes for auth and not found -------------------------------------------------
SEALBOX_TOKEN=wrong expect 4 "wrong token" -- seal --key k -i "$TMP/hello" -o "$TMP/x"
err_has "sealbox: seal: UNAUTHENTICATED: unknown token"
SEALBOX_TOKEN= expect 4 "no token" -- open --key k -i "$TMP/hello.sealed"
expect 4 "admin token on the data plane" -- --token admin-token seal --key k -i "$TMP/hello" -o "$TMP/x"
err_has "PERMISSION_DENIED"
expect 5 "missing key, unary" -- seal --key missing -i "$TMP/hello" -o "$TMP/x"
err_has 'sealbox: seal: NOT_FOUND: key "missing" not found'
expect 5 "missing key, stream" -- open --key missing -i "$TMP/big.sealed" -o "$TMP/x"
[[ -e "$TMP/x" ]] && fail "failed commands left output"

# --- admin -------------------------------------------------------------------------------
# The text and JSON layouts are unit-tested (admin_output_test); here, which
# response each command prints, and in which form.
export SEALBOX_TOKEN=admin-token
expect 0 "tenant list" -- admin tenant list
out_has "tenant acme"
expect 0 "tenant list --json" -- admin tenant list --json
out_has '"name": "acme"'
expect 0 "tenant create" -- admin tenant create beta
out_has "created tenant beta"
expect 0 "token issue" -- admin token issue acme --description "ci job"
[[ "$(cat "$TMP/out")" == fresh-token ]] || fail "token issue stdout is not the token alone"
err_has "issued token t2 for tenant acme"
expect 5 "unknown tenant" -- admin token issue ghost
err_has 'sealbox: issue token for ghost: NOT_FOUND: tenant "ghost" not found'
expect 0 "key get" -- admin key get acme default
out_has "acme/default  AES-256-GCM  primary v2  min decryption v1"
expect 0 "key get --json" -- --json admin key get acme default
out_has '"algorithm": "AES_256_GCM"'
head -c 16 /dev/urandom >"$TMP/k16"
expect 0 "key import" -- admin key import acme byok --material-file "$TMP/k16"
out_has "acme/byok  AES-128-GCM"
out_has "imported"
expect 0 "destroy v1 (no terminal: no prompt)" -- admin key destroy acme default v1
out_has "v1    destroyed"
expect 1 "destroy primary" -- admin key destroy acme default 2 --yes
err_has "sealbox: destroy version 2 of key acme/default: FAILED_PRECONDITION: the primary version cannot be destroyed"
expect 1 "unimplemented method" -- admin key rotate acme default
err_has "UNIMPLEMENTED"
expect 4 "tenant token on admin" -- --token tenant-token admin tenant list
export SEALBOX_TOKEN=tenant-token

# --- TLS ----------------------------------------------------------------------------------
if command -v openssl >/dev/null; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null \
    || fail "openssl could not make a certificate"
  start_fake tls "$TMP/cert.pem" "$TMP/key.pem"
  TLS="127.0.0.1:$PORT"
  expect 0 "TLS with --tls-ca" -- --server "$TLS" --tls-ca "$TMP/cert.pem" --tls-server-name localhost \
    seal --key k -i "$TMP/hello" -o "$TMP/tls.sealed"
  expect 0 "TLS stream" -- --server "$TLS" --tls-ca "$TMP/cert.pem" --tls-server-name localhost \
    open --key k --aad big -i "$TMP/big.sealed" -o "$TMP/tls.opened"
  same "$TMP/tls.opened" "$TMP/big" "TLS stream round trip"
  expect 6 "plaintext to a TLS server" -- --server "$TLS" seal --key k -i "$TMP/hello" -o "$TMP/x"
  expect 6 "TLS without the CA" -- --server "$TLS" --tls-server-name localhost \
    seal --key k -i "$TMP/hello" -o "$TMP/x"
else
  echo "openssl not found: TLS checks skipped"
fi

if [[ $FAILURES -ne 0 ]]; then
  echo "$FAILURES check(s) failed" >&2
  exit 1
fi
echo "all checks passed"
