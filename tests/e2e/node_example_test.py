"""End-to-end: the Node.js example client (client/examples/node) against the real server:
seal_open.js, and envelope.js's files, also opened by the Python example's helper
(client/examples/python/envelope.py) and the other way round.

The npm packages are not a Bazel dependency: `tools/dev test` runs `npm ci` in
client/examples/node and passes --test_env=SEALBOX_NODE_MODULES=<that node_modules>
(and SEALBOX_NODE=<the node binary>). Without them this test fails and says so.
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath("client/examples/python"))
import envelope  # noqa: E402
from harness import Server, bearer, file_sha256, load_stubs, read_bytes  # noqa: E402

SCRIPT = "client/examples/node/seal_open.js"
ENVELOPE = "client/examples/node/envelope.js"
MIB = 1 << 20
HOW_TO = ("run `tools/dev test`, which installs the packages (npm ci in client/examples/node) "
          "and passes them in, or add --test_env=SEALBOX_NODE_MODULES=$PWD/client/examples/node/"
          "node_modules to `bazel test`")


def node_setup():
    """(node binary, node_modules folder); raises AssertionError saying what is missing."""
    modules = os.environ.get("SEALBOX_NODE_MODULES")
    if not modules:
        raise AssertionError("SEALBOX_NODE_MODULES is not set: " + HOW_TO)
    if not os.path.isdir(os.path.join(modules, "@grpc", "grpc-js")):
        raise AssertionError(f"SEALBOX_NODE_MODULES={modules} holds no @grpc/grpc-js: " + HOW_TO)
    node = os.environ.get("SEALBOX_NODE") or shutil.which("node") or "/usr/bin/node"
    if not os.access(node, os.X_OK):
        raise AssertionError(f"no node binary (tried {node}); set --test_env=SEALBOX_NODE=PATH "
                             "or run `tools/dev test`")
    return node, modules


def closed_port():
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_random(path, size):
    with open(path, "wb") as f:
        for offset in range(0, size, MIB):
            f.write(os.urandom(min(MIB, size - offset)))


class NodeTestCase(unittest.TestCase):
    """Node with its packages, and a server with a tenant, for the classes below."""

    @classmethod
    def setUpClass(cls):
        cls.node, cls.modules = node_setup()
        cls.server = Server().start()
        cls.token = cls.server.new_tenant("acme")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def run_example(self, *args, token=None, script=SCRIPT):
        env = dict(os.environ, NODE_PATH=self.modules)
        env.pop("SEALBOX_TOKEN", None)
        if token is not None:
            env["SEALBOX_TOKEN"] = token
        # --preserve-symlinks(-main): resolve packages from the runfiles tree, for the
        # script and the modules it requires, so they can only come from NODE_PATH,
        # never from a node_modules next to the source files.
        return subprocess.run([self.node, "--preserve-symlinks", "--preserve-symlinks-main",
                               script, *args], capture_output=True, env=env, timeout=120)


class NodeExample(NodeTestCase):
    def test_seal_open_and_streams(self):
        result = self.run_example(self.server.address, token=self.token)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        out = result.stdout.decode()
        self.assertRegex(out, r"unary: sealed \d+ bytes under version 1, opened OK")
        self.assertRegex(out, r"stream: 3145733 bytes -> \d+ bytes and back, OK")

    def test_proto_dir_flag(self):
        result = self.run_example(self.server.address, "--proto-dir", "proto", token=self.token)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        self.assertIn(b"stream:", result.stdout)

    def test_failures_are_clear_and_non_zero(self):
        cases = {
            "no token": ((self.server.address,), None, "SEALBOX_TOKEN"),
            "bad token": ((self.server.address,), "not-a-token", "Seal failed: UNAUTHENTICATED"),
            "unknown key": ((self.server.address, "--key", "nope"), self.token, "Seal failed: "),
            "no proto": ((self.server.address, "--proto-dir", "/nonexistent"), self.token,
                         "no sealbox/v1/data.proto under /nonexistent"),
            "no server": ((f"127.0.0.1:{closed_port()}", "--timeout", "10"), self.token,
                          "Seal failed: UNAVAILABLE"),
        }
        for what, (args, token, message) in cases.items():
            with self.subTest(what):
                result = self.run_example(*args, token=token)
                self.assertEqual(result.returncode, 1, what)
                self.assertIn(message, result.stderr.decode(errors="replace"))
                self.assertNotIn(b"OK", result.stdout)

    def test_crc32c_known_values(self):
        # docs/FORMAT.md, "Checksums".
        probe = ("const { crc32c } = require(process.argv[1]);"
                 "console.log(['123456789', 'hello, sealbox', '']"
                 ".map((s) => crc32c(Buffer.from(s))).join(' '))")
        result = subprocess.run(
            [self.node, "-e", probe, os.path.abspath("client/examples/node/crc32c.js")],
            capture_output=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        self.assertEqual(result.stdout.split(), [b"3808858755", b"3630349962", b"0"])


class NodeEnvelope(NodeTestCase):
    """envelope.js against the real server, and beside the Python helper."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        _, data_grpc = load_stubs("data")
        cls.channel = grpc.insecure_channel(cls.server.address)
        cls.stub = data_grpc.CryptoStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        super().tearDownClass()

    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))

    def path(self, name):
        return os.path.join(self.dir, name)

    def node_envelope(self, command, source, target, aad="file-1"):
        return self.run_example(command, "--key", "default", "--aad", aad, source, target,
                                self.server.address, token=self.token, script=ENVELOPE)

    def test_a_64_mib_file_round_trips(self):
        source, sealed, opened = self.path("big"), self.path("big.env"), self.path("big.out")
        write_random(source, 64 * MIB)
        result = self.node_envelope("seal", source, sealed)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        self.assertIn(b"(key version 1), OK", result.stdout)
        header = read_bytes(sealed)[:14]
        self.assertEqual((header[0], int.from_bytes(header[1:5], "big"),
                          int.from_bytes(header[12:14], "big")), (0x03, MIB, 81))
        self.assertEqual(os.path.getsize(sealed), 14 + 81 + 64 * MIB + 16 * 65)
        result = self.node_envelope("open", sealed, opened)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        self.assertEqual(file_sha256(opened), file_sha256(source))

    def test_files_open_in_the_other_language(self):
        auth = bearer(self.token)
        for n in (0, 1, MIB - 1, MIB, MIB + 1, 3 * MIB + 5):
            with self.subTest(size=n):
                source = self.path(f"{n}")
                write_random(source, n)
                # Python seals, Node opens.
                envelope.seal_file(self.stub, auth, "default", source, source + ".py.env",
                                   b"file-1")
                result = self.node_envelope("open", source + ".py.env", source + ".py.out")
                self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
                self.assertEqual(read_bytes(source + ".py.out"), read_bytes(source))
                # Node seals, Python opens.
                result = self.node_envelope("seal", source, source + ".js.env")
                self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
                self.assertEqual(os.path.getsize(source + ".js.env"),
                                 os.path.getsize(source + ".py.env"))
                envelope.open_file(self.stub, auth, "default", source + ".js.env",
                                   source + ".js.out", b"file-1")
                self.assertEqual(read_bytes(source + ".js.out"), read_bytes(source))

    def test_failures_are_one_line_and_leave_nothing(self):
        source, sealed = self.path("plain"), self.path("plain.env")
        write_random(source, 2 * MIB + 7)
        self.assertEqual(self.node_envelope("seal", source, sealed).returncode, 0)
        good = read_bytes(sealed)
        flipped = bytearray(good)
        flipped[14 + 81 + MIB + 16 + 5] ^= 1  # in the second of three segments
        damaged = {
            "flipped": (bytes(flipped), "envelope.js: decryption failed"),
            "truncated": (good[:-1], "envelope.js: decryption failed"),
            "appended": (good + b"\0", "envelope.js: decryption failed"),
            "not an envelope": (b"\x02" + good[1:], "envelope.js: not a sealbox envelope file"),
        }
        for what, (data, message) in damaged.items():
            with self.subTest(what):
                with open(self.path("damaged.env"), "wb") as f:
                    f.write(data)
                out_dir = tempfile.mkdtemp(dir=self.dir)
                result = self.node_envelope("open", self.path("damaged.env"),
                                            os.path.join(out_dir, "plain"))
                self.assertEqual(result.returncode, 1)
                self.assertEqual(result.stderr.decode().splitlines(), [message])
                self.assertEqual(os.listdir(out_dir), [], "a partial or temporary file was left")

        out_dir = tempfile.mkdtemp(dir=self.dir)
        result = self.node_envelope("open", sealed, os.path.join(out_dir, "plain"), aad="other")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr.decode().splitlines(),
                         ["envelope.js: Open failed: INVALID_ARGUMENT: decryption failed"])
        self.assertEqual(os.listdir(out_dir), [])
        result = self.node_envelope("seal", self.path("missing"), self.path("o"))
        self.assertEqual(result.returncode, 1)
        self.assertEqual(len(result.stderr.decode().splitlines()), 1, result.stderr)
        self.assertIn("ENOENT", result.stderr.decode())


if __name__ == "__main__":
    unittest.main()
