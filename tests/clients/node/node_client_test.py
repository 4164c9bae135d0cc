"""End to end: sealbox's Node.js library (client/node) against the real server.

checks.js runs the library's scenarios (every call, errors, checksums, streams,
files, envelope files, a 100 MiB file, a retry across a restart, token renewal); this
file starts the servers, gives them tokens, and checks the figures. It also runs the
example program (client/examples/node/example.js) with the sealbox CLI opening what
it seals, compiles a TypeScript program against the types with `tsc --strict`, and
runs every block of docs/clients/NODE.md.

The npm packages are not a Bazel dependency: `tools/dev test` runs `npm ci` in
client/node and passes --test_env=SEALBOX_NODE_CLIENT_MODULES=<its node_modules> (and
SEALBOX_NODE=<the node binary>). Without them this test fails and says so.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.abspath("tests/e2e"))
from harness import Pki, Server, file_sha256, read_bytes  # noqa: E402

MIB = 1 << 20
CHECKS = os.path.abspath("tests/clients/node/checks.js")
EXAMPLE = os.path.abspath("client/examples/node/example.js")
PAGE = "docs/clients/NODE.md"
HOW_TO = ("run `tools/dev test`, which installs the packages (npm ci in client/node) and passes "
          "them in, or add --test_env=SEALBOX_NODE_CLIENT_MODULES=$PWD/client/node/node_modules "
          "to `bazel test`")
# Peak RSS of the node process sealing then opening 100 MiB. Node with grpc-js loaded
# is about 60 MiB; holding the file once would pass 160 MiB.
MAX_RSS_MIB = 140


def node_setup():
    """(node binary, node_modules folder); AssertionError saying what is missing."""
    modules = os.environ.get("SEALBOX_NODE_CLIENT_MODULES")
    if not modules:
        raise AssertionError("SEALBOX_NODE_CLIENT_MODULES is not set: " + HOW_TO)
    for package in ("@grpc/grpc-js", "@grpc/proto-loader", "typescript"):
        if not os.path.isdir(os.path.join(modules, package)):
            raise AssertionError(f"SEALBOX_NODE_CLIENT_MODULES={modules} holds no {package}: " + HOW_TO)
    node = os.environ.get("SEALBOX_NODE") or shutil.which("node") or "/usr/bin/node"
    if not os.access(node, os.X_OK):
        raise AssertionError(f"no node binary (tried {node}); set --test_env=SEALBOX_NODE=PATH")
    return node, modules


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def text(result):
    return (result.stdout + result.stderr).decode(errors="replace")


class NodeClient(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.node, cls.modules = node_setup()
        cls.tmp = tempfile.mkdtemp(prefix="node-client-", dir=os.environ.get("TEST_TMPDIR"))
        # `sealbox` resolves to the library in the runfiles, its packages to
        # SEALBOX_NODE_CLIENT_MODULES: never to a node_modules beside the sources.
        cls.link_dir = os.path.join(cls.tmp, "node_path")
        os.makedirs(cls.link_dir)
        os.symlink(os.path.abspath("client/node"), os.path.join(cls.link_dir, "sealbox"))
        cls.server = Server().start()
        cls.token = cls.server.new_tenant("acme")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def node_run(self, *args, server=None, token=None, cwd=None, timeout=120, **kwargs):
        env = dict(os.environ, NODE_PATH=f"{self.link_dir}:{self.modules}",
                   SEALBOX_SERVER=(server or self.server).address)
        env.pop("SEALBOX_TOKEN", None)
        if token is not None:
            env["SEALBOX_TOKEN"] = token
        return subprocess.run([self.node, "--preserve-symlinks", "--preserve-symlinks-main", *args],
                              capture_output=True, env=env, cwd=cwd, timeout=timeout, **kwargs)

    def figures(self, result):
        self.assertEqual(result.returncode, 0, text(result))
        return json.loads(result.stdout.decode().strip().splitlines()[-1])

    def test_proto_copy_matches_the_repository(self):
        self.assertEqual(
            read_bytes("client/node/proto/sealbox/v1/data.proto"), read_bytes("proto/sealbox/v1/data.proto"),
            "client/node/proto/sealbox/v1/data.proto differs from proto/sealbox/v1/data.proto: "
            "cp proto/sealbox/v1/data.proto client/node/proto/sealbox/v1/")

    def test_every_call(self):
        result = self.node_run(CHECKS, "calls", f"127.0.0.1:{closed_port()}", token=self.token)
        self.assertEqual(self.figures(result), {"ok": True})

    def test_a_100_mib_file_in_bounded_memory(self):
        source = os.path.join(self.tmp, "big.in")
        with open(source, "wb") as f:
            for _ in range(100):
                f.write(os.urandom(MIB))
        figures = self.figures(self.node_run(CHECKS, "bigfile", source, token=self.token))
        print(f"\n100 MiB: sealFile {figures['sealSeconds']:.2f} s, openFile "
              f"{figures['openSeconds']:.2f} s, peak RSS {figures['maxRssKiB'] / 1024:.0f} MiB",
              file=sys.stderr)
        self.assertEqual(file_sha256(os.path.join(self.tmp, "big.opened")), file_sha256(source))
        self.assertEqual(os.path.getsize(os.path.join(self.tmp, "big.sealed")),
                         48 + 1600 * (65536 + 16) + 16)
        self.assertLess(figures["maxRssKiB"], MAX_RSS_MIB * 1024)
        self.assertGreater(figures["progressCalls"], 100)
        for name in ("big.in", "big.sealed", "big.opened"):
            os.unlink(os.path.join(self.tmp, name))

    def test_a_call_in_a_restart_is_retried(self):
        server = Server().start()
        try:
            token = server.new_tenant("acme")
            port = server.port
            env = dict(os.environ, NODE_PATH=f"{self.link_dir}:{self.modules}",
                       SEALBOX_SERVER=server.address, SEALBOX_TOKEN=token)
            child = subprocess.Popen([self.node, "--preserve-symlinks", "--preserve-symlinks-main",
                                      CHECKS, "retry"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            if child.stdout.readline() != b"ready\n":
                child.kill()
                self.fail(child.communicate()[1].decode(errors="replace"))
            server.stop()
            child.stdin.write(b"go\n")  # the call starts with the server down
            child.stdin.flush()
            time.sleep(1.0)
            server.start(listen=f"127.0.0.1:{port}")
            out, err = child.communicate(timeout=60)
            self.assertEqual(child.returncode, 0, err.decode(errors="replace"))
            figures = json.loads(out.decode().strip().splitlines()[-1])
            self.assertGreaterEqual(figures["retries"], 1)
            self.assertGreaterEqual(figures["seconds"], 1.0)
        finally:
            server.stop()

    def test_an_expiring_token_is_renewed(self):
        # 5 s tokens over 8 s, renewed at the first call, then with a third left (at about
        # 3.3 and 6.7 s): a busy machine may take seconds to start Node.js, not five.
        token = self.server.admin("token", "issue", "acme", "--ttl", "5s").stdout.decode().strip()
        figures = self.figures(self.node_run(CHECKS, "renewal", "8", token=token))
        self.assertGreaterEqual(figures["renewals"], 3)
        self.assertEqual(figures["tokens"], figures["renewals"])
        self.assertGreater(figures["calls"], 10)

    def example(self, *args, token=None):
        return self.node_run(EXAMPLE, *args, token=self.token if token is None else token)

    def test_the_example_program(self):
        source = os.path.join(self.tmp, "example.in")
        with open(source, "wb") as f:
            f.write(os.urandom(MIB + 3))
        small = os.path.join(self.tmp, "small.in")
        with open(small, "wb") as f:
            f.write(b"a small file\n")
        for seal, open_, data in (("seal", "open", small), ("seal-stream", "open-stream", source),
                                  ("seal-envelope", "open-envelope", source)):
            with self.subTest(seal):
                sealed, opened = data + "." + seal, data + "." + open_
                result = self.example(seal, "--key", "default", "--aad", "x", data, sealed)
                self.assertEqual(result.returncode, 0, text(result))
                result = self.example(open_, "--key", "default", "--aad", "x", sealed, opened)
                self.assertEqual(result.returncode, 0, text(result))
                self.assertEqual(read_bytes(opened), read_bytes(data))
                # The CLI opens what the library sealed (the envelope with --envelope).
                cli = self.server.cli("open", "--key", "default", "--aad", "x", "-i", sealed,
                                      token=self.token)
                self.assertEqual(cli.stdout, read_bytes(data))
        # The library opens an envelope file the CLI sealed.
        self.server.cli("seal", "--envelope", "--key", "default", "--aad", "x", "-i", source,
                        "-o", source + ".cli.env", token=self.token)
        result = self.example("open-envelope", "--key", "default", "--aad", "x",
                              source + ".cli.env", source + ".cli.out")
        self.assertEqual(result.returncode, 0, text(result))
        self.assertEqual(read_bytes(source + ".cli.out"), read_bytes(source))

        failures = {
            "other aad": (("open-envelope", "--key", "default", "--aad", "y", source + ".seal-envelope",
                           source + ".x"), None, "example.js: DecryptionFailedError: decryption failed"),
            "not an envelope": (("open-envelope", "--key", "default", source, source + ".x"), None,
                                "example.js: EnvelopeFormatError: not a sealbox envelope file"),
            "bad token": (("seal", "--key", "default", small, small + ".x"), "sbx_nope",
                          "example.js: UnauthenticatedError: "),
            "no key": (("seal-stream", "--key", "nope", small, small + ".x"), None,
                       "example.js: NotFoundError: "),
        }
        for what, (args, token, line) in failures.items():
            with self.subTest(what):
                result = self.example(*args, token=token)
                self.assertEqual(result.returncode, 1, what)
                lines = result.stderr.decode().splitlines()
                self.assertEqual(len(lines), 1, result.stderr)
                self.assertTrue(lines[0].startswith(line), lines[0])
                self.assertFalse(os.path.exists(args[-1]))

    def test_typescript_types(self):
        project = os.path.join(self.tmp, "ts")
        os.makedirs(os.path.join(project, "node_modules"))
        for name in os.listdir(self.modules):
            os.symlink(os.path.join(self.modules, name), os.path.join(project, "node_modules", name))
        os.symlink(os.path.abspath("client/node"), os.path.join(project, "node_modules", "sealbox"))
        shutil.copy("tests/clients/node/usage.ts", project)
        result = subprocess.run(
            [self.node, os.path.join(self.modules, "typescript", "bin", "tsc"), "--noEmit", "--strict",
             "--module", "commonjs", "--moduleResolution", "node", "--target", "es2022",
             "--preserveSymlinks", "usage.ts"], cwd=project, capture_output=True, timeout=120)
        self.assertEqual(result.returncode, 0, text(result))


class NodePage(unittest.TestCase):
    """Every block of docs/clients/NODE.md, in a project beside a checkout."""

    def test_every_block_runs(self):
        node, modules = node_setup()
        root = tempfile.mkdtemp(prefix="node-page-", dir=os.environ.get("TEST_TMPDIR"))
        shutil.copytree("client/node", os.path.join(root, "sealbox", "client", "node"), symlinks=False)
        project = os.path.join(root, "my-service")
        os.makedirs(project)
        with open(os.path.join(project, "backup.tar"), "wb") as f:
            f.write(os.urandom(5 * MIB))
        # npm as a user runs it: from the registry, into a cache of the test's own. (An
        # offline install from the cache `npm ci` had filled passed only where an earlier
        # `npm install` had left the registry's metadata there: never on a new machine.)

        server = Server().start()
        pki = Pki()
        ca, ca_key = pki.make_ca("ca", "sealbox test CA")
        pki.issue("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1", ca, ca_key)
        pki.issue("client", "/CN=acme-service", "extendedKeyUsage=clientAuth", ca, ca_key)
        for name, target in (("ca.pem", "ca.pem"), ("client.pem", "client.pem"), ("client.key", "client.key")):
            shutil.copy(pki.path(name), os.path.join(project, target))
        mtls = Server(extra_args=["--tls-cert", pki.path("server.pem"), "--tls-key", pki.path("server.key"),
                                  "--client-ca", ca, "--cert-tenant", "acme-service=acme"])
        mtls.start()
        try:
            server.new_tenant("acme")
            token = server.admin("token", "issue", "acme", "--ttl", "1h").stdout.decode().strip()
            mtls.cli("--tls-ca", ca, "--tls-cert", pki.path("client.pem"), "--tls-key", pki.path("client.key"),
                     "admin", "tenant", "create", "acme", token=mtls.admin_token)
            mtls.cli("--tls-ca", ca, "--tls-cert", pki.path("client.pem"), "--tls-key", pki.path("client.key"),
                     "admin", "key", "create", "acme", "default", token=mtls.admin_token)
            env = dict(os.environ, SEALBOX_SERVER=server.address, SEALBOX_TOKEN=token,
                       PATH=f"{os.path.dirname(node)}:{modules}/.bin:{os.environ.get('PATH', '/usr/bin:/bin')}",
                       npm_config_cache=os.path.join(root, "npm-cache"),
                       npm_config_audit="false", npm_config_fund="false", npm_config_update_notifier="false")
            env.pop("NODE_PATH", None)
            self.run_page(project, env, mtls.address)
        finally:
            mtls.stop()
            server.stop()

    def run_page(self, project, env, mtls_address):
        with open(PAGE) as f:
            blocks = re.findall(r"```(\w+)\n(.*?)```", f.read(), re.S)
        self.assertGreaterEqual(len(blocks), 20)
        commands = 0
        for i, (kind, body) in enumerate(blocks):
            if kind in ("js", "ts"):
                name = re.match(r"// (\S+)\n", body).group(1)
                with open(os.path.join(project, name), "w") as f:
                    f.write(body)
            elif kind == "sh":
                commands += 1
                run_env = dict(env, SEALBOX_SERVER=mtls_address) if "mtls.js" in body else env
                result = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=project,
                                        env=run_env, capture_output=True, timeout=120)
                with self.subTest(body.strip()):
                    self.assertEqual(result.returncode, 0, text(result))
                    following = blocks[i + 1] if i + 1 < len(blocks) else None
                    if following and following[0] == "text":
                        self.assertEqual(result.stdout.decode(), following[1])
        self.assertGreaterEqual(commands, 9)
        self.assertTrue(os.path.isfile(os.path.join(project, "node_modules", "sealbox", "lib", "index.js")))
        self.assertEqual(read_bytes(os.path.join(project, "backup.tar.opened")),
                         read_bytes(os.path.join(project, "backup.tar")))


if __name__ == "__main__":
    unittest.main()
