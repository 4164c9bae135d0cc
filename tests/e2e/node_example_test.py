"""End-to-end: the Node.js example client (client/examples/node) against the real server.

The npm packages are not a Bazel dependency: `tools/dev test` runs `npm ci` in
client/examples/node and passes --test_env=SEALBOX_NODE_MODULES=<that node_modules>
(and SEALBOX_NODE=<the node binary>). Without them this test fails and says so.
"""
import os
import shutil
import socket
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server  # noqa: E402

SCRIPT = "client/examples/node/seal_open.js"
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


class NodeExample(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.node, cls.modules = node_setup()
        cls.server = Server().start()
        cls.token = cls.server.new_tenant("acme")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def run_example(self, *args, token=None):
        env = dict(os.environ, NODE_PATH=self.modules)
        env.pop("SEALBOX_TOKEN", None)
        if token is not None:
            env["SEALBOX_TOKEN"] = token
        # --preserve-symlinks-main: resolve packages from the runfiles tree, so they can
        # only come from NODE_PATH, never from a node_modules next to the source file.
        return subprocess.run([self.node, "--preserve-symlinks-main", SCRIPT, *args],
                              capture_output=True, env=env, timeout=120)

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


if __name__ == "__main__":
    unittest.main()
