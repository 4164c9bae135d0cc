"""End-to-end: the Go example client (client/examples/go) against the real server.

The client is built here, by client/examples/go/build.sh, in GOPATH mode against
Debian's Go packages (golang-go, golang-google-grpc-dev, protoc-gen-go-1-3,
protoc-gen-go-grpc, ...). They are not a Bazel dependency: `tools/dev test`
installs them, and without them this test fails saying so. GOPATH and GOCACHE
live in the test's TEST_TMPDIR: a build from nothing, about 10 s on two cores.

Besides the demo (unary calls with checksums, a stream, a batch), the envelope
helper: a 64 MiB round trip in bounded memory, files of sizes around the segment
size, an independent decryption of its output with python3-cryptography (the format
as docs/FORMAT.md gives it), damaged files refused with no output left behind, and
files sealed by the Python example's envelope helper.
"""
import hashlib
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Server, file_sha256  # noqa: E402

BUILD_SCRIPT = "client/examples/go/build.sh"
PYTHON_ENVELOPE = "client/examples/python/envelope.py"
HOW_TO = "run `tools/dev test` (or `tools/dev deps`), which installs Debian's Go packages"
# What build.sh needs: (path, the Debian package that provides it).
REQUIRED = [
    ("/usr/bin/go", "golang-go"),
    ("/usr/bin/protoc", "protobuf-compiler"),
    ("/usr/bin/protoc-gen-go", "protoc-gen-go-1-3"),
    ("/usr/bin/protoc-gen-go-grpc", "protoc-gen-go-grpc"),
    ("/usr/share/gocode/src/google.golang.org/grpc/version.go", "golang-google-grpc-dev"),
    ("/usr/share/gocode/src/github.com/golang/protobuf/proto/lib.go",
     "golang-github-golang-protobuf-1-3-dev"),
]

S = 1 << 20          # the segment size the helpers write
HEADER = 14 + 81     # the header with an AES-256 data key's sealed form
MIB = 1 << 20


def envelope_size(n):
    """The size of the envelope file of n bytes (docs/FORMAT.md)."""
    return HEADER + (n // S) * (S + 16) + n % S + 16


def write_random(path, size):
    with open(path, "wb") as f:
        for offset in range(0, size, 4 * MIB):
            f.write(os.urandom(min(4 * MIB, size - offset)))


def closed_port():
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_client(directory):
    """Builds sealbox-example into directory; returns its path (AssertionError when
    the packages are missing or the build fails)."""
    missing = sorted({package for path, package in REQUIRED if not os.path.exists(path)})
    if missing:
        raise AssertionError(f"Go packages missing ({', '.join(missing)}): " + HOW_TO)
    binary = os.path.join(directory, "sealbox-example")
    env = dict(os.environ, PATH="/usr/bin:/bin", GOPATH_WORK=os.path.join(directory, "gopath"),
               GOCACHE=os.path.join(directory, "gocache"),
               HOME=directory)
    started = time.monotonic()
    result = subprocess.run(["bash", BUILD_SCRIPT, binary], capture_output=True, env=env,
                            timeout=600)
    if result.returncode != 0:
        raise AssertionError(f"{BUILD_SCRIPT} failed ({HOW_TO} if a package is missing):\n"
                             + result.stderr.decode(errors="replace"))
    print(f"go_example_test: built sealbox-example in {time.monotonic() - started:.1f} s",
          file=sys.stderr)
    return binary


class GoExample(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="sealbox-go-", dir=os.environ.get("TEST_TMPDIR"))
        cls.binary = build_client(cls.home)
        cls.server = Server().start()
        cls.token = cls.server.new_tenant("acme")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def run_client(self, *args, token=None):
        """Runs sealbox-example ARGS, with --server this test's server after the
        command words unless ARGS name one."""
        words = 2 if args[:1] == ("envelope",) else 1
        server = [] if not args or "--server" in args else ["--server", self.server.address]
        return subprocess.run([self.binary, *args[:words], *server, *args[words:]],
                              capture_output=True, env=self.env(token), timeout=300)

    def env(self, token):
        env = dict(os.environ)
        env.pop("SEALBOX_TOKEN", None)
        if token is not None:
            env["SEALBOX_TOKEN"] = token
        return env

    def ok(self, *args, token=None):
        result = self.run_client(*args, token=token or self.token)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        return result.stdout.decode()

    def fails(self, *args, token=None, status=1):
        """Runs a command that must fail: its stderr."""
        result = self.run_client(*args, token=token)
        stderr = result.stderr.decode(errors="replace")
        self.assertEqual(result.returncode, status, stderr)
        self.assertNotIn(b"OK", result.stdout)
        return stderr

    def scratch(self):
        return tempfile.mkdtemp(dir=self.home)

    # ---- the demo ----------------------------------------------------------------

    def test_demo(self):
        out = self.ok("demo")
        self.assertRegex(out, r"unary: sealed 62 bytes under version 1, opened OK, "
                              r"CRC32C checked both ways")
        self.assertIn(f"stream: 3145733 bytes -> {48 + 48 * 65552 + 5 + 16} bytes and back, OK",
                      out)
        for item in (0, 1, 3):
            self.assertRegex(out, rf"batch: item {item}: sealed \d+ bytes under version 1")
        self.assertIn('batch: item 2: NOT_FOUND: ', out)
        self.assertIn("batch: 3 of 4 items sealed (item 2's key does not exist), "
                      "opened again with OpenBatch, OK", out)

    def test_failures_are_clear(self):
        cases = {
            "no token": (("demo",), None, 1, "set SEALBOX_TOKEN"),
            "bad token": (("demo",), "not-a-token", 1, "Seal failed: UNAUTHENTICATED"),
            "unknown key": (("demo", "--key", "nope"), self.token, 1, "Seal failed: NOT_FOUND"),
            "no server": (("demo", "--server", f"127.0.0.1:{closed_port()}", "--timeout", "10s"),
                          self.token, 1, "Seal failed: UNAVAILABLE"),
            "envelope, unknown key": (("envelope", "seal", "--key", "nope", "/dev/null",
                                       os.path.join(self.home, "x")), self.token, 1,
                                      "GenerateDataKey failed: NOT_FOUND"),
            "no command": ((), self.token, 2, "no command given"),
            "unknown command": (("frobnicate",), self.token, 2, 'unknown command "frobnicate"'),
            "envelope without files": (("envelope", "seal"), self.token, 2,
                                       "envelope seal takes 2 file arguments, not 0"),
            "bad flag": (("demo", "--nope"), self.token, 2, "flag provided but not defined"),
        }
        for what, (args, token, status, message) in cases.items():
            with self.subTest(what):
                stderr = self.fails(*args, token=token, status=status)
                self.assertIn(message, stderr)
                if status == 2:
                    self.assertIn("usage: sealbox-example", stderr)

    def test_help(self):
        result = self.run_client("--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn(b"envelope seal [flags] IN OUT", result.stdout)

    # ---- the envelope helper -----------------------------------------------------

    def seal(self, plain, sealed, aad="report.csv"):
        self.ok("envelope", "seal", "--aad", aad, plain, sealed)

    def open(self, sealed, out, aad="report.csv"):
        self.ok("envelope", "open", "--aad", aad, sealed, out)

    def test_64_mib_round_trip_in_bounded_memory(self):
        d = self.scratch()
        plain, sealed, out = (os.path.join(d, n) for n in ("plain", "plain.env", "plain.out"))
        write_random(plain, 64 * MIB)
        rss = {}
        for command, src, dst in (("seal", plain, sealed), ("open", sealed, out)):
            rss[command] = self.max_rss_kib(
                [self.binary, "envelope", command, "--server", self.server.address,
                 "--aad", "big", src, dst])
        self.assertEqual(os.path.getsize(sealed), envelope_size(64 * MIB))
        self.assertEqual(file_sha256(out), file_sha256(plain))
        # One segment (1 MiB) at a time, not the file: well under 64 MiB either way.
        for command, kib in rss.items():
            self.assertLess(kib, 40 * 1024, f"envelope {command} of 64 MiB: max RSS {kib} KiB")
        print(f"go_example_test: 64 MiB envelope max RSS: seal {rss['seal']} KiB, "
              f"open {rss['open']} KiB", file=sys.stderr)

    def max_rss_kib(self, argv):
        """Runs argv to success; its own peak resident memory in KiB (wait4's)."""
        with tempfile.TemporaryFile() as err:
            process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err,
                                       env=self.env(self.token))
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            self.assertEqual(process.returncode, 0, err.read().decode(errors="replace"))
        return usage.ru_maxrss

    def test_sizes_around_the_segment_size(self):
        d = self.scratch()
        for size in (0, 1, S - 1, S, S + 1, 2 * S + 12345):
            with self.subTest(size=size):
                plain = os.path.join(d, f"p{size}")
                write_random(plain, size)
                self.seal(plain, plain + ".env")
                self.assertEqual(os.path.getsize(plain + ".env"), envelope_size(size))
                self.open(plain + ".env", plain + ".out")
                self.assertEqual(file_sha256(plain + ".out"), file_sha256(plain))

    def test_format_matches_the_document(self):
        """Decrypts a Go-sealed file independently: the header parsed by hand, the data
        key opened with a plain Open call, the segments with python3-cryptography."""
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        d = self.scratch()
        plain = os.path.join(d, "plain")
        write_random(plain, 2 * S + 12345)
        self.seal(plain, plain + ".env", aad="bucket/object")
        data = harness.read_bytes(plain + ".env")

        fmt, s, prefix, length = struct.unpack(">BI7sH", data[:14])
        self.assertEqual((fmt, s, length), (0x03, S, 81))
        sealed_key = data[14:14 + length]
        self.assertEqual(sealed_key[0], 0x01)  # a unary ciphertext
        client = harness.CryptoClient(self.server.address, self.token)
        try:
            key = client.open("default", sealed_key, b"bucket/object")
        finally:
            client.close()
        self.assertEqual(len(key), 32)
        aead, aad = AESGCM(key), data[:12]
        body, opened = data[14 + length:], b""
        for i, start in enumerate(range(0, len(body), S + 16)):
            last = start + S + 16 >= len(body)
            nonce = prefix + struct.pack(">I", i) + (b"\x01" if last else b"\x00")
            opened += aead.decrypt(nonce, body[start:start + S + 16], aad)
        self.assertEqual(opened, harness.read_bytes(plain))

    def test_damaged_files_are_refused_and_leave_nothing(self):
        d = self.scratch()
        plain = os.path.join(d, "plain")
        write_random(plain, 3 * S + 777)
        self.seal(plain, plain + ".env")
        good = harness.read_bytes(plain + ".env")
        seg = lambda i: HEADER + i * (S + 16)  # noqa: E731  where segment i starts

        def flip(at):
            return good[:at] + bytes([good[at] ^ 0x01]) + good[at + 1:]

        cases = {
            "a bit flipped in segment 1": (flip(seg(1) + 1000), "segment 1 does not authenticate"),
            "a bit flipped in the last tag": (flip(len(good) - 1), "segment 3 does not authenticate"),
            "a bit flipped in the nonce prefix": (flip(7), "segment 0 does not authenticate"),
            "a bit flipped in the sealed key": (flip(60), "Open failed: INVALID_ARGUMENT"),
            "the last segment dropped": (good[:seg(3)], "the file is truncated"),
            "the last segment cut short": (good[:seg(3) + 10], "the file is truncated"),
            "one byte missing": (good[:-1], "segment 3 does not authenticate"),
            "one byte appended": (good + b"\x00", "segment 3 does not authenticate"),
            "segments 0 and 1 swapped": (good[:seg(0)] + good[seg(1):seg(2)]
                                         + good[seg(0):seg(1)] + good[seg(2):],
                                         "segment 0 does not authenticate"),
            "not an envelope": (b"\x02" + good[1:], "not an envelope file (format byte 0x02"),
            "a bad segment size": (good[:1] + struct.pack(">I", 1000) + good[5:],
                                   "bad segment size 1000"),
            "a bad sealed key length": (good[:12] + struct.pack(">H", 28) + good[14:],
                                        "bad sealed key length 28"),
            "only a header": (good[:HEADER], "the file is truncated"),
            "empty": (b"", "shorter than its header"),
        }
        for what, (data, message) in cases.items():
            with self.subTest(what):
                out_dir = tempfile.mkdtemp(dir=d)
                damaged = os.path.join(d, "damaged.env")
                with open(damaged, "wb") as f:
                    f.write(data)
                stderr = self.fails("envelope", "open", "--aad", "report.csv", damaged,
                                    os.path.join(out_dir, "out"), token=self.token)
                self.assertIn(message, stderr)
                self.assertEqual(os.listdir(out_dir), [], "output or temporary file left")

        with self.subTest("the wrong associated data"):
            out_dir = tempfile.mkdtemp(dir=d)
            stderr = self.fails("envelope", "open", "--aad", "other.csv", plain + ".env",
                                os.path.join(out_dir, "out"), token=self.token)
            self.assertIn("Open failed: INVALID_ARGUMENT: decryption failed", stderr)
            self.assertEqual(os.listdir(out_dir), [])

        with self.subTest("a failed open keeps an existing output file as it was"):
            damaged, out = os.path.join(d, "damaged.env"), os.path.join(d, "existing")
            with open(damaged, "wb") as f:
                f.write(flip(seg(2)))
            with open(out, "wb") as f:
                f.write(b"keep me")
            self.fails("envelope", "open", "--aad", "report.csv", damaged, out, token=self.token)
            self.assertEqual(harness.read_bytes(out), b"keep me")

    def python_envelope(self, command, source, target, aad):
        result = subprocess.run(["/usr/bin/python3", PYTHON_ENVELOPE, command, source, target,
                                 self.server.address, "--key", "default", "--aad", aad],
                                capture_output=True, env=self.env(self.token), timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))

    def test_files_of_the_python_helper(self):
        """The Python example's envelope helper and this one read each other's files."""
        if not os.path.exists(PYTHON_ENVELOPE):
            self.skipTest(f"{PYTHON_ENVELOPE} is not in this build")
        d = self.scratch()
        for size in (0, S, 2 * S + 99):
            with self.subTest(size=size):
                plain = os.path.join(d, f"p{size}")
                write_random(plain, size)
                self.python_envelope("seal", plain, plain + ".py.env", aad="x")
                self.open(plain + ".py.env", plain + ".py.out", aad="x")
                self.assertEqual(file_sha256(plain + ".py.out"), file_sha256(plain))
                self.seal(plain, plain + ".go.env", aad="x")
                self.python_envelope("open", plain + ".go.env", plain + ".go.out", aad="x")
                self.assertEqual(file_sha256(plain + ".go.out"), file_sha256(plain))

if __name__ == "__main__":
    unittest.main()
