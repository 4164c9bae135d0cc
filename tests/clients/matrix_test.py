"""The cross-language matrix: what each client seals, every other opens.

Five clients against one real server: the CLI and the example programs of the Python,
Go, Node.js and Java libraries (client/examples/*), which take the same arguments:

    EXAMPLE seal|open|seal-stream|open-stream|seal-envelope|open-envelope \
        --key KEY [--aad TEXT] IN OUT

For each of the three formats (a unary ciphertext, a stream, an envelope file), each
client seals a file and each of the four others opens it: 5 x 4 pairs per format (a
client opening its own is its own test's business). The Go example is built here
with Debian's Go packages, the Java one by the build (//client/examples/java:jars);
Node.js's npm packages come from `tools/dev test` (SEALBOX_NODE_CLIENT_MODULES).
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.abspath("tests/e2e"))
from harness import CLI, Server, go_build_cache, java_classpaths, read_bytes  # noqa: E402

HOW_TO = "run it with `tools/dev test`, which installs the packages and passes their folders"
# Sizes per format: a unary call takes at most 1 MiB; the others cross segment bounds.
SIZES = {"unary": 200_000, "stream": 3 * (1 << 20) + 17, "envelope": 2 * (1 << 20) + 5}
AAD = "matrix"
# Each Java run is a short process: the client compiler alone and the serial collector
# start it with a fifth less CPU.
SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def work_dir():
    return tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


class Clients:
    """The command line of each client's example, built once per run."""

    def __init__(self):
        self.work = work_dir()
        self.commands = {"cli": None, "python": self.python(), "go": self.go(),
                         "node": self.node(), "java": self.java()}

    def python(self):
        return ["/usr/bin/python3", os.path.abspath("client/examples/python/sealbox_example.py")]

    def go(self):
        output = os.path.join(self.work, "go-example")
        with go_build_cache(os.path.join(self.work, "gocache")) as gocache:
            env = dict(os.environ, GOPATH_WORK=os.path.join(self.work, "gopath"),
                       GOCACHE=gocache)
            build = subprocess.run(["bash", "client/examples/go/build.sh", output], env=env,
                                   capture_output=True, timeout=600)
        if build.returncode != 0:
            raise RuntimeError(f"building the Go example failed ({HOW_TO}): "
                               + build.stderr.decode(errors="replace"))
        return [output]

    def node(self):
        modules = os.environ.get("SEALBOX_NODE_CLIENT_MODULES")
        if not modules or not os.path.isdir(modules):
            raise RuntimeError(f"SEALBOX_NODE_CLIENT_MODULES is not set ({HOW_TO})")
        # `sealbox` is the library in the runfiles, its npm packages those of
        # `tools/dev test`'s npm ci in client/node.
        links = os.path.join(self.work, "node_path")
        os.makedirs(links)
        os.symlink(os.path.abspath("client/node"), os.path.join(links, "sealbox"))
        self.node_path = f"{links}:{modules}"
        return [os.environ.get("SEALBOX_NODE", "node"), "--preserve-symlinks",
                "--preserve-symlinks-main", os.path.abspath("client/examples/node/example.js")]

    def java(self):
        # Built by client/examples/java/build.sh once per build (//client/examples/java:jars).
        _, example = java_classpaths()
        return ["java", *SHORT_JVM.split(), "-cp", example, "SealboxExample"]


def cli_args(command, key, source, target):
    """The CLI's spelling of an example command (it picks unary or stream by size, and
    `open` reads the format from the first byte)."""
    verb, _, kind = command.partition("-")
    args = [verb, "--key", key, "--aad", AAD, "-i", source, "-o", target]
    if verb == "seal" and kind == "stream":
        args.append("--stream")
    if verb == "seal" and kind == "envelope":
        args.append("--envelope")
    return args


class Matrix(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server().start()
        cls.token = cls.server.new_tenant("acme")
        cls.clients = Clients()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def run_client(self, name, command, source, target):
        env = dict(os.environ, SEALBOX_SERVER=self.server.address, SEALBOX_TOKEN=self.token,
                   PYTHONPATH=os.path.abspath("client/python"),
                   NODE_PATH=getattr(self.clients, "node_path", ""))
        if name == "cli":
            line = CLI + ["--server", self.server.address] + cli_args(command, "default",
                                                                      source, target)
        else:
            line = self.clients.commands[name] + [command, "--key", "default", "--aad", AAD,
                                                  source, target]
        result = subprocess.run(line, env=env, capture_output=True, timeout=300)
        self.assertEqual(result.returncode, 0, f"{name} {command}: "
                         + result.stderr.decode(errors="replace"))

    def test_each_client_opens_what_each_sealed(self):
        work = work_dir()
        names = list(self.clients.commands)
        for kind, size in SIZES.items():
            plain = os.path.join(work, f"{kind}.plain")
            with open(plain, "wb") as f:
                f.write(os.urandom(size))
            digest = hashlib.sha256(read_bytes(plain)).hexdigest()
            seal = "seal" if kind == "unary" else f"seal-{kind}"
            open_ = "open" if kind == "unary" else f"open-{kind}"
            for sealer in names:
                sealed = os.path.join(work, f"{kind}.{sealer}.sealed")
                self.run_client(sealer, seal, plain, sealed)
                first = {"unary": 0x01, "stream": 0x02, "envelope": 0x03}[kind]
                self.assertEqual(read_bytes(sealed)[0], first, f"{sealer} {seal}")
                for opener in (name for name in names if name != sealer):
                    with self.subTest(kind=kind, sealed_by=sealer, opened_by=opener):
                        opened = os.path.join(work, f"{kind}.{sealer}.{opener}.opened")
                        self.run_client(opener, open_, sealed, opened)
                        self.assertEqual(hashlib.sha256(read_bytes(opened)).hexdigest(),
                                         digest)
                        os.unlink(opened)
        shutil.rmtree(work)

    def test_a_changed_byte_fails_alike_in_every_client(self):
        """Each example reports a tampered envelope file the same way: exit 1, one line
        naming its decryption-failure type."""
        work = work_dir()
        plain = os.path.join(work, "plain")
        with open(plain, "wb") as f:
            f.write(os.urandom(100_000))
        sealed = os.path.join(work, "sealed")
        self.run_client("python", "seal-envelope", plain, sealed)
        data = bytearray(read_bytes(sealed))
        data[-20] ^= 1
        with open(sealed, "wb") as f:
            f.write(data)
        for name in ("python", "go", "node", "java"):
            with self.subTest(name):
                env = dict(os.environ, SEALBOX_SERVER=self.server.address,
                           SEALBOX_TOKEN=self.token, PYTHONPATH=os.path.abspath("client/python"),
                           NODE_PATH=getattr(self.clients, "node_path", ""))
                out = os.path.join(work, f"{name}.out")
                result = subprocess.run(self.clients.commands[name] + [
                    "open-envelope", "--key", "default", "--aad", AAD, sealed, out],
                    env=env, capture_output=True, timeout=120)
                self.assertEqual(result.returncode, 1, result.stderr.decode(errors="replace"))
                lines = result.stderr.decode().splitlines()
                self.assertEqual(len(lines), 1, lines)
                self.assertIn("DecryptionFailed", lines[0])
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
