#!/usr/bin/env bash
# The sealbox CLI without a server: help text, usage errors (exit 2), an
# unreachable server (exit 6), and inputs rejected before any call (exit 1, 3).
set -uo pipefail

SEALBOX="${TEST_SRCDIR:-}/${TEST_WORKSPACE:-sealbox}/client/sealbox"
[[ -x "$SEALBOX" ]] || SEALBOX="$(dirname "$0")/sealbox"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/sealbox_cli.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
# A port that was just free: connections to it are refused at once. (A fixed port
# such as 1 is not safe: anything running as root may listen there.)
DEAD="127.0.0.1:$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
unset SEALBOX_SERVER SEALBOX_TOKEN

FAILURES=0
fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }

# expect CODE DESCRIPTION -- ARGS...: runs sealbox with stdin from $STDIN (default
# /dev/null), keeps stdout and stderr in $TMP/out and $TMP/err, checks the exit code.
expect() {
  local want="$1" what="$2"; shift 3
  "$SEALBOX" "$@" <"${STDIN:-/dev/null}" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [[ $got -ne $want ]]; then
    fail "$what: exit $got, want $want (sealbox $*)"
    sed 's/^/  stderr: /' "$TMP/err" >&2
  fi
}
# out_has / err_has TEXT: the last run's stdout / stderr contains TEXT.
out_has() { grep -qF -- "$1" "$TMP/out" || fail "stdout lacks '$1'"; }
err_has() { grep -qF -- "$1" "$TMP/err" || fail "stderr lacks '$1'"; }
err_lines() {
  local n; n=$(wc -l <"$TMP/err")
  [[ $n -eq $1 ]] || { fail "stderr has $n lines, want $1"; cat "$TMP/err" >&2; }
}

# --- help ---------------------------------------------------------------------
expect 0 "top-level help" -- --help
for text in "Usage: sealbox" seal open rewrap "admin key" "--server HOST:PORT" \
    "--token TOKEN" "--tls-ca" "--tls-cert" "--tls-key" "--insecure" "--timeout" "--json" \
    SEALBOX_SERVER SEALBOX_TOKEN "Exit codes" "3  decryption failed" "6  server unavailable"; do
  out_has "$text"
done
[[ -s "$TMP/err" ]] && fail "--help wrote to stderr"
expect 0 "help -h" -- -h
out_has "Exit codes"
expect 0 "help command" -- help admin key
out_has "sealbox admin key destroy TENANT KEY VERSION"
out_has "sealbox admin key disable-key TENANT KEY"
expect 0 "seal help" -- seal --help
for text in "Usage: sealbox seal --key NAME" "--aad TEXT" "--aad-file FILE" "-i, --input" \
    "-o, --output" "--stream" "1 MiB"; do
  out_has "$text"
done
expect 0 "open help" -- open -h
out_has "first byte"
out_has "plaintext may already have been written"
expect 0 "admin help" -- admin --help
out_has "sealbox admin tenant create NAME"
out_has "sealbox admin token issue TENANT"
out_has "sealbox admin key import TENANT KEY --material-file FILE"
expect 0 "admin key create help" -- admin key create --help
out_has "--algorithm ALG"
expect 0 "help after global flags" -- --server "$DEAD" admin --json tenant list --help
out_has "Usage: sealbox admin tenant list"

# --- usage errors: exit 2, one error line and a hint ---------------------------
# How flags, options and addresses are parsed and checked is unit-tested
# (args_test, options_test, server_address_test); here, what the binary makes of
# a bad command line: the message, the hint and the exit code.
expect 2 "no command" --
err_has "sealbox: missing command"
expect 2 "unknown command" -- frobnicate
err_has "sealbox: unknown command 'frobnicate'"
expect 2 "unknown admin command" -- admin frob
err_has "unknown command 'admin frob'"
expect 2 "incomplete command" -- admin key
err_has "sealbox admin key create"
expect 2 "seal without --key" -- seal
err_has "sealbox: --key NAME is required"
err_has "Run 'sealbox seal --help' for usage."
err_lines 2
expect 2 "unknown global flag" -- --key k seal
expect 2 "aad and aad-file" -- seal --key k --aad x --aad-file /dev/null
expect 2 "unexpected argument" -- seal --key k extra
err_has "unexpected argument 'extra'"
expect 2 "missing arguments" -- admin key create acme
err_has "missing arguments"
expect 2 "too many arguments" -- admin tenant list acme
expect 2 "bad algorithm" -- admin key create acme k --algorithm des
err_has "aes128 or aes256"
expect 2 "bad min version" -- admin key min-version acme k two
expect 2 "version zero" -- admin key disable acme k 0
expect 2 "negative version" -- admin key enable acme k -1
expect 2 "import without material" -- admin key import acme k
head -c 10 /dev/zero >"$TMP/short.key"
expect 2 "material of 10 bytes" -- admin key import acme k --material-file "$TMP/short.key"
err_has "exactly 16 or 32 raw bytes"
expect 2 "bad segment size" -- seal --key k --segment-size 1000
expect 2 "bad global option" -- --server nowhere admin tenant list
err_has "sealbox: server address 'nowhere' is not HOST:PORT"

# --- unreachable server: exit 6 ------------------------------------------------
printf 'hello' >"$TMP/plain"
expect 6 "seal, unary" -- --server "$DEAD" seal --key k -i "$TMP/plain" -o "$TMP/sealed"
err_has "sealbox: seal: UNAVAILABLE: "
err_has "(server $DEAD)"
err_lines 1
STDIN="$TMP/plain" expect 6 "seal from stdin, flags after the command" -- \
  seal --key k -o "$TMP/sealed" --server "$DEAD"
expect 6 "seal, streamed" -- --server "$DEAD" seal --stream --key k -i "$TMP/plain" -o "$TMP/sealed"
err_has "sealbox: seal: UNAVAILABLE: "
SEALBOX_SERVER="$DEAD" expect 6 "server from the environment" -- admin tenant list
err_has "sealbox: list tenants: UNAVAILABLE: "
expect 6 "admin with --json" -- --server "$DEAD" --json --token t admin key get acme k
err_has "sealbox: get key acme/k: UNAVAILABLE: "
printf '\001unary' >"$TMP/unary.sealed"
expect 6 "open, unary" -- --server "$DEAD" open --key k -i "$TMP/unary.sealed" -o "$TMP/opened"
err_has "sealbox: open: UNAVAILABLE: "
printf '\002stream' >"$TMP/stream.sealed"
expect 6 "open, streamed" -- --server "$DEAD" open --key k -i "$TMP/stream.sealed" -o "$TMP/opened"
expect 6 "rewrap" -- --server "$DEAD" rewrap --key k -i "$TMP/unary.sealed" -o "$TMP/rewrapped"
expect 6 "unreachable with a timeout" -- --server "$DEAD" --timeout 2 admin tenant list
# A server that accepts connections but never answers: the deadline passes before
# the channel connects, which is "cannot connect" (6), not a slow call (1).
if command -v python3 >/dev/null; then
  python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
held = []
s.settimeout(0.2)
end = time.time() + 60
while time.time() < end:
    try: held.append(s.accept()[0])
    except socket.timeout: pass
' >"$TMP/sink.port" &
  SINK=$!
  for _ in $(seq 100); do [[ -s "$TMP/sink.port" ]] && break; sleep 0.1; done
  expect 6 "silent server" -- --server "127.0.0.1:$(cat "$TMP/sink.port")" --timeout 1 \
    admin tenant list
  err_has "could not connect to 127.0.0.1:"
  kill "$SINK" 2>/dev/null
fi
# A failed command leaves neither the target nor its temporary file.
[[ -e "$TMP/sealed" || -e "$TMP/opened" || -e "$TMP/rewrapped" ]] && fail "output left after failure"
compgen -G "$TMP/.*.sealbox-*" >/dev/null && fail "temporary file left after failure"
printf 'keep me' >"$TMP/existing"
expect 6 "existing output kept" -- --server "$DEAD" open --key k -i "$TMP/unary.sealed" -o "$TMP/existing"
[[ "$(cat "$TMP/existing")" == "keep me" ]] || fail "failed open changed the existing output"

# --- inputs rejected before any call ---------------------------------------------
printf 'hello' >"$TMP/not-sealed"
expect 3 "open of plaintext" -- --server "$DEAD" open --key k -i "$TMP/not-sealed"
err_has "is not a sealbox ciphertext (first byte 0x68)"
: >"$TMP/empty"
expect 3 "open of empty input" -- --server "$DEAD" open --key k -i "$TMP/empty"
expect 1 "rewrap of a stream" -- --server "$DEAD" rewrap --key k -i "$TMP/stream.sealed" -o "$TMP/x"
err_has "stream ciphertext"
expect 1 "missing input file" -- --server "$DEAD" seal --key k -i "$TMP/absent" -o "$TMP/x"
err_has "No such file or directory"
expect 1 "unreadable --tls-ca" -- --tls-ca "$TMP/absent.pem" admin tenant list
err_has "--tls-ca"

if [[ $FAILURES -ne 0 ]]; then
  echo "$FAILURES check(s) failed" >&2
  exit 1
fi
echo "all checks passed"
