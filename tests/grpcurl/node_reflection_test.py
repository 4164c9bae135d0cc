"""sealbox's reflection read by a client written by others: grpc-js-reflection-client
(npm), over reflection v1 and v1alpha, resolving each service with its imports and
calling health, Seal/Open and both streams with what it learned.

The npm packages are not a Bazel dependency: `tools/dev test` runs `npm ci` in
tests/grpcurl/node and passes --test_env=SEALBOX_REFLECTION_NODE_MODULES=<its
node_modules> (and SEALBOX_NODE=<the node binary>). Without them this test fails and
says so.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../e2e"))

from harness import Server  # noqa: E402

SCRIPT = os.path.join(HERE, "node/reflection_check.js")
HOW_TO = ("run `tools/dev test`, which installs the packages (npm ci in tests/grpcurl/node) "
          "and passes them in, or add --test_env=SEALBOX_REFLECTION_NODE_MODULES="
          "$PWD/tests/grpcurl/node/node_modules to `bazel test`")


class NodeReflectionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.modules = os.environ.get("SEALBOX_REFLECTION_NODE_MODULES", "")
        if not os.path.isdir(os.path.join(cls.modules, "grpc-js-reflection-client")):
            raise AssertionError(f"no grpc-js-reflection-client in "
                                 f"SEALBOX_REFLECTION_NODE_MODULES={cls.modules!r}: " + HOW_TO)
        cls.node = os.environ.get("SEALBOX_NODE") or shutil.which("node") or "/usr/bin/node"
        cls.server = Server().start()
        cls.token = cls.server.new_tenant("acme")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_both_reflection_versions(self):
        for version in ("v1", "v1alpha"):
            with self.subTest(version=version):
                env = dict(os.environ, NODE_PATH=self.modules, SEALBOX_TOKEN=self.token)
                result = subprocess.run(
                    [self.node, "--preserve-symlinks-main", SCRIPT, self.server.address, version],
                    env=env, capture_output=True, text=True, timeout=120)
                self.assertEqual(result.returncode, 0, result.stderr)
                seen = json.loads(result.stdout)
                self.assertEqual(seen["services"], [
                    "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                    "grpc.reflection.v1alpha.ServerReflection", "sealbox.v1.Admin",
                    "sealbox.v1.Crypto"])
                # Every Admin method the proto declares, found through reflection.
                with open("proto/sealbox/v1/admin.proto") as f:
                    declared = re.findall(r"^  rpc (\w+)\(", f.read(), re.M)
                self.assertEqual(sorted(m.rsplit(".", 1)[-1].rsplit("/", 1)[-1]
                                        for m in seen["adminMethods"]), sorted(declared))
                self.assertEqual(seen["health"], "SERVING")
                self.assertEqual(seen["opened"], f"hello from node over reflection {version}")
                self.assertEqual(seen["keyVersion"], 1)
                self.assertEqual(seen["streamBytes"], 48 + 100_000 + 25 * 16)
                self.assertTrue(seen["streamOpened"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
