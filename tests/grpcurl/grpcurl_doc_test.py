"""docs/GRPCURL.md, run as written.

Every `sh` block runs in order in one scratch directory, against a dev-mode server
started there (and, for the sections the document marks, a TLS and a mutual-TLS
server sharing its keystore). A `text` block right after a command is its expected
output. The `grpcurl` on the PATH is tests/grpcurl/grpcurl: a reflection-only
stand-in for the real one, which Debian does not package.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "../..")
sys.path.insert(0, os.path.join(HERE, "../e2e"))

from harness import Pki  # noqa: E402
from reflection_client import GRPCURL_CODE_NAMES  # noqa: E402

DOC = os.path.join(ROOT, "docs/GRPCURL.md")
README = os.path.join(ROOT, "README.md")
SERVER_BIN = os.path.join(ROOT, "server/sealbox-server")
CLI_BIN = os.path.join(ROOT, "client/sealbox")
DOC_ADDRESS = "localhost:50051"
GRPC_CODES = {name: number for number, name in GRPCURL_CODE_NAMES.items()}


def blocks(text):
    """(server, command, expected output or None) for each `sh` block, in order."""
    found, server = [], "dev"
    fence = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
    position = 0
    marker = re.compile(r"<!-- server: (\w+) -->")
    pending = None  # the last sh block, waiting for its output block
    for match in fence.finditer(text):
        between = text[position:match.start()]
        for m in marker.finditer(between):
            server = m.group(1)
        if pending is not None:
            # Output belongs to the command just above it (blank lines between only).
            expected = match.group(2) if match.group(1) == "text" and not between.strip() else None
            found.append(pending + (expected,))
            pending = None
        if match.group(1) == "sh":
            pending = (server, match.group(2))
        position = match.end()
    if pending is not None:
        found.append(pending + (None,))
    return found


def matches(expected, output):
    """Whether `output` has `expected`'s lines in order; a line "..." stands for any
    lines, and "..." within a line for any text."""
    pattern = ""
    for line in expected.rstrip("\n").split("\n"):
        if line.strip() == "...":
            pattern += r"(?:[^\n]*\n)*?"
        else:
            pattern += re.escape(line.rstrip()).replace(re.escape("..."), r"[^\n]*") + r"\n"
    text = "".join(line.rstrip() + "\n" for line in output.rstrip("\n").split("\n"))
    return re.fullmatch(pattern, text) is not None


class Servers:
    """The dev-mode server, and TLS and mutual-TLS servers on its keystore."""

    def __init__(self, work):
        self.work = work
        self.processes = []
        self.ports = {}

    def start(self, name, args, ready):
        log = open(os.path.join(self.work, f"..{name}.log"), "w+")
        process = subprocess.Popen([SERVER_BIN, "--listen", "127.0.0.1:0"] + args,
                                   cwd=self.work, stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(process)
        deadline = time.time() + 30
        while time.time() < deadline:
            log.seek(0)
            text = log.read()
            serving = re.search(r'"event":"serving","port":(\d+)', text)
            if serving and ready(text):
                self.ports[name] = int(serving.group(1))
                return
            if process.poll() is not None:
                raise AssertionError(f"{name} server exited:\n{text}")
            time.sleep(0.1)
        raise AssertionError(f"{name} server did not start:\n{text}")

    def stop(self):
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait(timeout=30)


class GrpcurlDocTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="grpcurl-doc-", dir=os.environ.get("TEST_TMPDIR"))
        pki = Pki()
        ca, ca_key = pki.make_ca("ca", "sealbox doc test CA")
        server_cert, server_key = pki.issue("server", "/CN=localhost",
                                            "subjectAltName=DNS:localhost,IP:127.0.0.1",
                                            ca, ca_key)
        client_cert, client_key = pki.issue("client", "/CN=demo-service",
                                            "extendedKeyUsage=clientAuth", ca, ca_key)
        for source, name in ((ca, "ca.pem"), (client_cert, "client.pem"),
                             (client_key, "client.key")):
            shutil.copy(source, os.path.join(cls.work, name))
        cls.servers = Servers(cls.work)
        cls.servers.start("dev", ["--dev"], lambda text: "DEV MODE" in text)
        replica = ["--data-dir", ".sealbox-dev", "--kek-file", ".sealbox-dev/kek",
                   "--admin-token-file", ".sealbox-dev/admin-token",
                   "--tls-cert", server_cert, "--tls-key", server_key]
        cls.servers.start("tls", replica, lambda text: True)
        cls.servers.start("mtls", replica + ["--client-ca", ca,
                                             "--cert-tenant", "demo-service=demo"],
                          lambda text: True)

    @classmethod
    def tearDownClass(cls):
        cls.servers.stop()

    def run_block(self, server, command, state):
        script = "\n".join([
            "set -eo pipefail",
            f"source {state}",
            # 127.0.0.1, not localhost: localhost also resolves to ::1, where another
            # test's server may hold the same port number (the client then logs a
            # failed handshake before it tries 127.0.0.1).
            command.replace(DOC_ADDRESS, f"127.0.0.1:{self.servers.ports[server]}"),
            # What the block exported, for the blocks after it.
            f"export -p | grep -v -E '^declare -x (PWD|OLDPWD|SHLVL|_)=' > {state}",
        ])
        env = {
            "PATH": HERE + os.pathsep + "/usr/bin:/bin",
            "HOME": self.work,
            "LANG": "C.UTF-8",
            "SEALBOX_PROTO_DIR": os.path.join(ROOT, "proto"),
        }
        return subprocess.run(["bash", "-c", script], cwd=self.work, env=env, timeout=120,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def test_every_command_runs_as_documented(self):
        with open(DOC) as f:
            doc = f.read()
        found = blocks(doc)
        self.assertGreater(len(found), 25)
        state = os.path.join(self.work, "..state.sh")
        open(state, "w").close()
        failures = []
        for number, (server, command, expected) in enumerate(found, 1):
            result = self.run_block(server, command, state)
            want = 0
            if expected is not None and re.search(r"^ERROR:", expected, re.M):
                code = re.search(r"Code: (\w+)", expected).group(1)
                want = 64 + GRPC_CODES[code]
            problem = None
            if result.returncode != want:
                problem = f"exit status {result.returncode}, expected {want}"
            elif expected is not None and not matches(expected, result.stdout):
                problem = "output differs"
            if problem:
                failures.append(f"block {number} ({server}): {problem}\n--- command:\n"
                                f"{command}--- expected:\n{expected}--- got:\n{result.stdout}")
        self.assertEqual(failures, [], "\n\n".join(failures))

    def test_the_readme_first_call(self):
        """The README's quick start: the dev server's banner shows the README's first
        call, and the call works as written with the CLI where `tools/dev serve` links
        it (.sealbox-dev/bin). Only the address is given apart (SEALBOX_SERVER): this
        server is not on 50051."""
        with open(README) as f:
            readme = f.read()
        block = re.search(r"exact commands for a first call, for example:\n\n```sh\n(.*?)```",
                          readme, re.S).group(1)
        with open(os.path.join(self.work, "..dev.log")) as f:
            banner = f.read()
        with open(os.path.join(self.work, ".sealbox-dev/demo-token")) as f:
            token = f.read().strip()
        for line in block.splitlines():
            printed = line.replace("<the demo token it printed>", token)
            self.assertIn("  " + printed + "\n", banner, "the banner and README.md differ")
        bin_dir = os.path.join(self.work, ".sealbox-dev/bin")
        os.makedirs(bin_dir, exist_ok=True)
        link = os.path.join(bin_dir, "sealbox")
        if not os.path.exists(link):
            os.symlink(os.path.abspath(CLI_BIN), link)
        script = block.replace("<the demo token it printed>", token)
        env = dict(os.environ, SEALBOX_SERVER=f"127.0.0.1:{self.servers.ports['dev']}")
        env.pop("SEALBOX_TOKEN", None)
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=self.work,
                                env=env, capture_output=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertEqual(result.stdout, b"hello, sealbox\n")

    def test_every_call_has_a_recipe(self):
        with open(DOC) as f:
            commands = "\n".join(command for _, command, _ in blocks(f.read()))
        env = dict(os.environ, PATH=HERE + os.pathsep + os.environ["PATH"],
                   SEALBOX_PROTO_DIR=os.path.join(ROOT, "proto"))
        address = f"localhost:{self.servers.ports['dev']}"
        for service in ("sealbox.v1.Crypto", "sealbox.v1.Admin", "grpc.health.v1.Health"):
            methods = subprocess.run(["grpcurl", "-plaintext", address, "list", service],
                                     env=env, check=True, capture_output=True,
                                     text=True).stdout.split()
            for method in methods:
                if method == "grpc.health.v1.Health.Watch":
                    continue  # a stream that never ends: not a copy-paste command
                with self.subTest(method=method):
                    service_name, _, name = method.rpartition(".")
                    self.assertIn(f"{service_name}/{name}", commands)


if __name__ == "__main__":
    unittest.main(verbosity=2)
