"""End to end: the Go client library (client/go) against the real server.

Go is built once per run, in GOPATH mode against Debian's packages, with GOPATH in
TEST_TMPDIR and GOCACHE the run's shared one (SEALBOX_GOCACHE, or TEST_TMPDIR's): the
library (its unit tests and go vet included) by the
install commands of docs/clients/GO.md, then, at once, the example client
(client/examples/go), the driver (driver.go: a scenario per command, a line per
check) and the page's Go blocks. The scenarios run against real servers: every
call, a 100 MiB file in bounded memory, a retry across a server restart on the same
port, token renewal past the original token's expiry, tampered ciphertexts and
checksums, mTLS; the example's commands and error lines, and its envelope files
checked against docs/FORMAT.md with python3-cryptography.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "tests/e2e"))
import harness  # noqa: E402
from harness import Server, file_sha256, write_random  # noqa: E402

GUIDE = "docs/clients/GO.md"
HOW_TO = "run `tools/dev test` (or `tools/dev deps`), which installs Debian's Go packages"
REQUIRED = [
    ("/usr/bin/go", "golang-go"),
    ("/usr/bin/protoc", "protobuf-compiler"),
    ("/usr/bin/protoc-gen-go", "protoc-gen-go-1-3"),
    ("/usr/bin/protoc-gen-go-grpc", "protoc-gen-go-grpc"),
    ("/usr/share/gocode/src/google.golang.org/grpc/version.go", "golang-google-grpc-dev"),
    ("/usr/share/gocode/src/google.golang.org/genproto/googleapis/rpc/errdetails",
     "golang-google-genproto-dev"),
]
MIB = 1 << 20
S = MIB                 # the envelope segment size
HEADER = 14 + 81        # an envelope header with an AES-256 data key's sealed form
RSS_BOUND_KIB = 48 * 1024


def log(message):
    print(f"go_client_test: {message}", file=sys.stderr, flush=True)


def guide_path():
    """The guide: a runfile once //:docs/clients/GO.md is exported, else the source
    tree's (found through this file's symlink)."""
    if os.path.exists(GUIDE):
        return GUIDE
    source = os.path.realpath(os.path.join(ROOT, "tests/clients/go/go_client_test.py"))
    return os.path.join(os.path.dirname(source), "../../..", GUIDE)


def envelope_size(n):
    return HEADER + (n // S) * (S + 16) + n % S + 16


def run(argv, env, what, timeout=300, **kwargs):
    result = subprocess.run(argv, capture_output=True, env=env, timeout=timeout, **kwargs)
    if result.returncode != 0:
        raise AssertionError(f"{what} failed ({HOW_TO} if a package is missing):\n"
                             + result.stdout.decode(errors="replace")
                             + result.stderr.decode(errors="replace"))
    return result.stdout.decode()


def max_rss_kib(argv, env):
    """Runs argv to success; (its stdout, its own peak resident memory in KiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise AssertionError(f"{argv} failed: " + err.read().decode(errors="replace"))
        return out.read().decode(), usage.ru_maxrss


def guide_blocks(language):
    with open(guide_path()) as f:
        return re.findall(rf"```{language}\n(.*?)```", f.read(), re.S)


FRAGMENTS = '''package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"sealbox.dev/go/sealbox"
)

var _, _, _, _, _ = bytes.MinRead, errors.New, fmt.Sprint, log.Print, time.Second

%s

func main() {
	c, err := sealbox.New(os.Getenv("SEALBOX_SERVER"), sealbox.WithToken(os.Getenv("SEALBOX_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	fragments := []func(context.Context, *sealbox.Client) error{%s}
	for _, f := range fragments[:len(fragments)-1] {
		if err := f(context.Background(), c); err != nil {
			log.Fatal(err)
		}
	}
	// The last one, mTLS, against the server named by its argument.
	os.Setenv("SEALBOX_SERVER", os.Args[1])
	if err := fragments[len(fragments)-1](context.Background(), c); err != nil {
		log.Fatal(err)
	}
}
'''


class GoClient(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        started = time.monotonic()
        missing = sorted({p for path, p in REQUIRED if not os.path.exists(path)})
        if missing:
            raise AssertionError(f"Go packages missing ({', '.join(missing)}): " + HOW_TO)
        cls.home = tempfile.mkdtemp(prefix="sealbox-go-", dir=os.environ.get("TEST_TMPDIR"))
        cls.server = Server().start()
        cls.token = cls.server.new_tenant("acme")
        # Renewable, for RenewToken and the guide's renewal block.
        cls.expiring = cls.server.admin("token", "issue", "acme", "--ttl", "1h").stdout.decode().strip()
        with harness.go_build_cache(os.path.join(cls.home, "gocache")) as gocache:
            cls.build(gocache)
        log(f"setup (server, builds) in {time.monotonic() - started:.1f} s")

    @classmethod
    def build(cls, gocache):
        """The guide's install commands (the library, unit tests, vet), then at once
        the example, the driver and the guide's programs, with `gocache` as GOCACHE."""
        cls.gopath = os.path.join(cls.home, "sealbox-go")
        cls.go_env = dict(os.environ, PATH="/usr/bin:/bin", HOME=cls.home,
                          GOCACHE=gocache,
                          GO111MODULE="off",
                          GOPATH=cls.gopath + ":/usr/share/gocode", GOFLAGS="",
                          SEALBOX_SERVER=cls.server.address, SEALBOX_TOKEN=cls.expiring)
        cls.work = os.path.join(cls.home, "guide")
        os.mkdir(cls.work)
        for name in ("client", "proto"):  # build.sh runs from the repository root
            os.symlink(os.path.join(ROOT, name), os.path.join(cls.work, name))
        # The module block ("As a Go module") is go_module_test's.
        blocks = [b for b in guide_blocks("sh") if "--module" not in b]
        install, first_call, reference = blocks[0], blocks[1], blocks[2]
        go_blocks = guide_blocks("go")
        t = time.monotonic()
        out = run(["bash", "-euo", "pipefail", "-c", install + "go env GOPATH"], cls.go_env,
                  "the guide's install commands", cwd=cls.work)
        log(f"library built, vetted and unit-tested in {time.monotonic() - t:.1f} s")
        cls.install_output, cls.guide_shell = out, (install, first_call, reference)
        cls.guide_go = go_blocks

        cls.driver = os.path.join(cls.home, "driver")
        cls.example_binary = os.path.join(cls.home, "sealbox-example")
        os.makedirs(os.path.join(cls.gopath, "src/sealbox-go-driver"))
        shutil.copy("tests/clients/go/driver.go", os.path.join(cls.gopath, "src/sealbox-go-driver"))
        fragments = [b for b in go_blocks if not b.startswith("package main")]
        funcs = "\n".join(f"func fragment{i}(ctx context.Context, c *sealbox.Client) error {{\n"
                          f"{body}\treturn nil\n}}\n" for i, body in enumerate(fragments))
        names = ", ".join(f"fragment{i}" for i in range(len(fragments)))
        os.makedirs(os.path.join(cls.gopath, "src/guide-fragments"))
        with open(os.path.join(cls.gopath, "src/guide-fragments/main.go"), "w") as f:
            f.write(FRAGMENTS % (funcs, names))
        cls.fragments = os.path.join(cls.home, "fragments")
        jobs = {
            "the example": (["bash", "client/examples/go/build.sh", cls.example_binary],
                            dict(cls.go_env, GOPATH_WORK=os.path.join(cls.home, "example-gopath"))),
            "the driver": (["bash", "-c", "go vet sealbox-go-driver && "
                            f"go build -o {cls.driver} sealbox-go-driver"], cls.go_env),
            "the guide's Go blocks": (["go", "build", "-o", cls.fragments, "guide-fragments"],
                                      cls.go_env),
        }
        t = time.monotonic()
        errors = []

        def build(what, argv, env):
            try:
                run(argv, env, f"building {what}")
            except AssertionError as e:
                errors.append(e)
        threads = [threading.Thread(target=build, args=(what, *job)) for what, job in jobs.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        log(f"example, driver and guide built in {time.monotonic() - t:.1f} s")
        # Token renewal runs 6 s: started now, it overlaps the other tests. The
        # token expires in 4 s, counted from before the issuing call (the CLI may return
        # a second later on a busy machine; the driver must not be told a later expiry).
        issued_before = int(time.time())
        short = cls.server.admin("token", "issue", "acme", "--ttl", "4s").stdout.decode().strip()
        short_expiry = issued_before + 4
        cls.renewal = subprocess.Popen([cls.driver, "renew", str(short_expiry), "6"],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       env=cls.env(short))

    @classmethod
    def tearDownClass(cls):
        if cls.renewal.poll() is None:
            cls.renewal.kill()
            cls.renewal.wait()
        cls.server.stop()

    @classmethod
    def env(cls, token=None, server=None):
        return dict(os.environ, SEALBOX_SERVER=server or cls.server.address,
                    SEALBOX_TOKEN=token or cls.token)

    def drive(self, *args, token=None, server=None):
        out = run([self.driver, *args], self.env(token or self.expiring, server),
                  f"driver {' '.join(args)}")
        log(f"driver {args[0]}:\n" + out.rstrip())
        return out

    def scratch(self):
        return tempfile.mkdtemp(dir=self.home)

    # ---- the library ---------------------------------------------------------------

    def test_every_call_its_errors_and_checksums(self):
        out = self.drive("calls")
        for line in ("ok Open of a tampered ciphertext: DecryptionFailedError",
                     "ok OpenStream of a tampered stream: DecryptionFailedError",
                     "ok OpenBatch: the tampered item: DecryptionFailedError",
                     'ok a request with a wrong CRC32C: InvalidArgumentError "checksum mismatch"',
                     "ok an answer with a wrong CRC32C: ChecksumError",
                     "ok RenewToken: the client uses the successor"):
            self.assertIn(line, out)

    def test_100_mib_file_in_bounded_memory(self):
        d = self.scratch()
        plain = os.path.join(d, "big")
        write_random(plain, 100 * MIB)
        out, kib = max_rss_kib([self.driver, "files", plain], self.env(self.token))
        log(f"SealFile + OpenFile of 100 MiB: max RSS {kib} KiB\n{out.rstrip()}")
        self.assertEqual(file_sha256(plain + ".out"), file_sha256(plain))
        self.assertEqual(os.path.getsize(plain + ".sealed"),
                         48 + 100 * (MIB + 16) + 16)  # 1 MiB segments, an empty last one
        self.assertLess(kib, RSS_BOUND_KIB, f"max RSS {kib} KiB")
        self.assertEqual(sorted(os.listdir(d)), ["big", "big.out", "big.sealed"])

        # The example's envelope files, the same 100 MiB.
        for command, src, dst in (("seal-envelope", plain, plain + ".env"),
                                  ("open-envelope", plain + ".env", plain + ".env.out")):
            _, kib = max_rss_kib([self.example_binary, command, "--key", "default", src, dst],
                                 self.env())
            log(f"example {command} of 100 MiB: max RSS {kib} KiB")
            self.assertLess(kib, RSS_BOUND_KIB)
        self.assertEqual(os.path.getsize(plain + ".env"), envelope_size(100 * MIB))
        self.assertEqual(file_sha256(plain + ".env.out"), file_sha256(plain))

    def test_a_call_during_a_restart_is_retried(self):
        server = Server().start()
        try:
            token = server.new_tenant("acme")
            for kind in ("unary", "stream"):
                driver = subprocess.Popen([self.driver, "gap", kind], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          env=self.env(token, server.address))
                self.assertEqual(driver.stdout.readline(), b"ready\n")
                port = server.port
                server.stop()
                driver.stdin.write(b"go\n")
                driver.stdin.close()
                time.sleep(1.0)  # the calls never retried fail meanwhile
                server.start(listen=f"127.0.0.1:{port}")
                out = driver.stdout.read().decode()
                self.assertEqual(driver.wait(timeout=60), 0, out)
                log(f"driver gap {kind}:\n{out.rstrip()}")
                self.assertIn(f"ok {kind} call across the restart", out)
                self.assertIn("ok RenewToken is never retried", out)
                self.assertIn("ok a stream whose input cannot be read again is not retried", out)
        finally:
            server.stop()

    def test_token_renewal_outlives_the_original_token(self):
        out, _ = self.renewal.communicate(timeout=60)
        out = out.decode()
        log("driver renew:\n" + out.rstrip())
        self.assertEqual(self.renewal.returncode, 0, out)
        self.assertIn("ok the original token after its expiry: UnauthenticatedError", out)

    def test_mtls(self):
        pki = harness.Pki()
        ca, ca_key = pki.make_ca("ca", "sealbox test CA")
        pki.issue("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1", ca, ca_key)
        pki.issue("client", "/CN=acme-service", "extendedKeyUsage=clientAuth", ca, ca_key)
        server = self.mtls_server(pki, ca)
        try:
            out = self.drive("tls", ca, pki.path("client.pem"), pki.path("client.key"),
                             server=server.address)
            self.assertIn("ok mTLS: Seal and Open", out)
            # The guide's blocks: the last is its mTLS one.
            d = self.scratch()
            for name in ("ca.pem", "client.pem", "client.key"):
                shutil.copy(pki.path(name), d)
            write_random(os.path.join(d, "report.csv"), 300_000)
            out = run([self.fragments, server.address], self.go_env, "the guide's Go blocks",
                      cwd=d).rstrip()
            self.assertIn("does not decrypt: wrong key, other associated data, or changed", out)
            self.assertIn("300000 of 300000 bytes", out)
            for name in ("report.copy.csv", "report.env.csv"):
                self.assertEqual(file_sha256(os.path.join(d, name)),
                                 file_sha256(os.path.join(d, "report.csv")))
            with open(os.path.join(d, "token")) as f:
                self.assertNotEqual(f.read(), self.expiring)  # the renewal's successor
        finally:
            server.stop()

    @staticmethod
    def mtls_server(pki, ca):
        server = Server(extra_args=["--tls-cert", pki.path("server.pem"),
                                    "--tls-key", pki.path("server.key"),
                                    "--client-ca", ca, "--cert-tenant", "acme-service=acme"])
        server.start()
        tls = ["--tls-ca", ca, "--tls-cert", pki.path("client.pem"),
               "--tls-key", pki.path("client.key")]
        server.cli(*tls, "admin", "tenant", "create", "acme", token=server.admin_token)
        server.cli(*tls, "admin", "key", "create", "acme", "default", token=server.admin_token)
        return server

    # ---- the guide -----------------------------------------------------------------

    def test_guide_commands(self):
        install, first_call, reference = self.guide_shell
        self.assertIn("ok  \tsealbox.dev/go/sealbox", self.install_output)  # unit tests ran
        programs = [b for b in self.guide_go if b.startswith("package main")]
        self.assertEqual(len(programs), 1)
        with open(os.path.join(self.work, "hello.go"), "w") as f:
            f.write(programs[0])
        out = run(["bash", "-euo", "pipefail", "-c", install + first_call + reference],
                  self.go_env, "the guide's commands", cwd=self.work)
        self.assertIn("hello, sealbox (key version 1)", out)
        self.assertIn("func (c *Client) SealFile(", out)
        self.assertIn("type DecryptionFailedError struct", out)

    # ---- the example ---------------------------------------------------------------

    def example(self, *args, token=None):
        return subprocess.run([self.example_binary, *args], capture_output=True,
                              env=self.env(token), timeout=120)

    def ok(self, *args):
        result = self.example(*args)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        self.assertEqual(result.stderr, b"")

    def fails(self, *args, token=None):
        """The one error line of a command that must fail."""
        result = self.example(*args, token=token)
        stderr = result.stderr.decode(errors="replace")
        self.assertEqual(result.returncode, 1, stderr)
        self.assertEqual(stderr.count("\n"), 1, stderr)
        self.assertTrue(stderr.startswith("sealbox-example: "), stderr)
        return stderr

    def test_example_commands(self):
        d = self.scratch()
        plain = os.path.join(d, "plain")
        write_random(plain, 200_000)
        for seal, open_ in (("seal", "open"), ("seal-stream", "open-stream"),
                            ("seal-envelope", "open-envelope")):
            with self.subTest(seal):
                sealed, out = plain + "." + seal, plain + "." + open_
                self.ok(seal, "--key", "default", "--aad", "x", plain, sealed)
                self.ok(open_, "--key", "default", "--aad", "x", sealed, out)
                self.assertEqual(file_sha256(out), file_sha256(plain))
                stderr = self.fails(open_, "--key", "default", "--aad", "y", sealed, out + "2")
                self.assertEqual(stderr, "sealbox-example: DecryptionFailedError: decryption failed\n")
                self.assertFalse(os.path.exists(out + "2"))
                data = harness.read_bytes(sealed)
                at = len(data) // 2
                with open(sealed + ".bad", "wb") as f:
                    f.write(data[:at] + bytes([data[at] ^ 1]) + data[at + 1:])
                stderr = self.fails(open_, "--key", "default", "--aad", "x", sealed + ".bad", out + "3")
                self.assertIn("sealbox-example: DecryptionFailedError: ", stderr)
                self.assertFalse(os.path.exists(out + "3"))
        cases = {
            "unknown key": (("seal", "--key", "nope", plain, plain + ".x"), None, "NotFoundError: "),
            "bad token": (("seal", "--key", "default", plain, plain + ".x"), "nope",
                          "UnauthenticatedError: "),
            "not an envelope": (("open-envelope", "--key", "default", plain, plain + ".x"), None,
                                "EnvelopeFormatError: envelope: not an envelope file"),
            "no such file": (("seal", "--key", "default", plain + ".none", plain + ".x"), None,
                             "Error: open "),
            "usage": (("seal", plain), None, "UsageError: "),
        }
        for what, (args, token, message) in cases.items():
            with self.subTest(what):
                self.assertIn(f"sealbox-example: {message}", self.fails(*args, token=token))

    def test_example_envelope_files_match_the_format(self):
        """Sizes around the segment size, and a file decrypted independently: the
        header parsed by hand, the data key opened with a plain Open, the segments
        with python3-cryptography."""
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        d = self.scratch()
        for size in (0, 1, S - 1, S, S + 1, 2 * S + 12345):
            with self.subTest(size=size):
                plain = os.path.join(d, f"p{size}")
                write_random(plain, size)
                self.ok("seal-envelope", "--key", "default", "--aad", "bucket/object",
                        plain, plain + ".env")
                self.assertEqual(os.path.getsize(plain + ".env"), envelope_size(size))
                self.ok("open-envelope", "--key", "default", "--aad", "bucket/object",
                        plain + ".env", plain + ".out")
                self.assertEqual(file_sha256(plain + ".out"), file_sha256(plain))
        data = harness.read_bytes(os.path.join(d, f"p{2 * S + 12345}.env"))
        fmt, s, prefix, length = struct.unpack(">BI7sH", data[:14])
        self.assertEqual((fmt, s, length), (0x03, S, 81))
        client = harness.CryptoClient(self.server.address, self.token)
        try:
            key = client.open("default", data[14:14 + length], b"bucket/object")
        finally:
            client.close()
        aead, aad = AESGCM(key), data[:12]
        body, opened = data[14 + length:], b""
        for i, start in enumerate(range(0, len(body), S + 16)):
            last = start + S + 16 >= len(body)
            nonce = prefix + struct.pack(">I", i) + (b"\x01" if last else b"\x00")
            opened += aead.decrypt(nonce, body[start:start + S + 16], aad)
        self.assertEqual(opened, harness.read_bytes(os.path.join(d, f"p{2 * S + 12345}")))

    def test_example_damaged_envelopes_leave_nothing(self):
        d = self.scratch()
        plain = os.path.join(d, "plain")
        write_random(plain, 3 * S + 777)
        self.ok("seal-envelope", "--key", "default", plain, plain + ".env")
        good = harness.read_bytes(plain + ".env")
        seg = lambda i: HEADER + i * (S + 16)  # noqa: E731  where segment i starts

        def flip(at):
            return good[:at] + bytes([good[at] ^ 0x01]) + good[at + 1:]
        cases = {
            "a bit flipped in segment 1": (flip(seg(1) + 1000), "DecryptionFailedError: envelope: segment 1"),
            "a bit flipped in the last tag": (flip(len(good) - 1), "DecryptionFailedError: envelope: segment 3"),
            "a bit flipped in the nonce prefix": (flip(7), "DecryptionFailedError: envelope: segment 0"),
            "a bit flipped in the sealed key": (flip(60), "DecryptionFailedError: decryption failed"),
            "the last segment dropped": (good[:seg(3)], "DecryptionFailedError: envelope: the file is truncated"),
            "one byte appended": (good + b"\x00", "DecryptionFailedError: envelope: segment 3"),
            "segments swapped": (good[:seg(0)] + good[seg(1):seg(2)] + good[seg(0):seg(1)]
                                 + good[seg(2):], "DecryptionFailedError: envelope: segment 0"),
            "a bad segment size": (good[:1] + struct.pack(">I", 1000) + good[5:],
                                   "EnvelopeFormatError: envelope: bad segment size 1000"),
            "empty": (b"", "EnvelopeFormatError: envelope: not an envelope file (shorter"),
        }
        for what, (data, message) in cases.items():
            with self.subTest(what):
                out_dir = tempfile.mkdtemp(dir=d)
                damaged = os.path.join(d, "damaged.env")
                with open(damaged, "wb") as f:
                    f.write(data)
                stderr = self.fails("open-envelope", "--key", "default", damaged,
                                    os.path.join(out_dir, "out"))
                self.assertIn(message, stderr)
                self.assertEqual(os.listdir(out_dir), [], "output or temporary file left")
        with self.subTest("an existing output is kept as it was"):
            out = os.path.join(d, "existing")
            with open(out, "wb") as f:
                f.write(b"keep me")
            self.fails("open-envelope", "--key", "default", os.path.join(d, "damaged.env"), out)
            self.assertEqual(harness.read_bytes(out), b"keep me")


if __name__ == "__main__":
    unittest.main()
