"""sealbox as kube-apiserver's KMS v2 plugin, driven by apiserver-standin (Go,
grpc-go: tests/kms/apiserver, README.md says how it differs from kube-apiserver)
over the real server's unix socket: 10,000 objects sealed with seed-derived keys
and read back after a restart, a rotation seen in Status's key_id, an Encrypt
answer under another key_id refused, and Status's health as the keystore, the key
and the socket come and go."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (CLI, SERVER, AdminClient, free_port, go_build_cache,  # noqa: E402
                     new_tenant, stubs, wait_for)
from kms_socket_test import kms_server  # noqa: E402

BUILD_SCRIPT = "tests/kms/apiserver/build.sh"
HOW_TO = "run `tools/dev test` (or `tools/dev deps`), which installs Debian's Go packages"
REQUIRED = [
    ("/usr/bin/go", "golang-go"),
    ("/usr/bin/protoc-gen-go", "protoc-gen-go-1-3"),
    ("/usr/bin/protoc-gen-go-grpc", "protoc-gen-go-grpc"),
    ("/usr/share/gocode/src/google.golang.org/grpc/version.go", "golang-google-grpc-dev"),
    ("/usr/share/gocode/src/golang.org/x/crypto/hkdf/hkdf.go", "golang-golang-x-crypto-dev"),
]


_built = {}


def build_standin(directory):
    """The stand-in, built once per run (Go's build takes most of this test's CPU)."""
    if "binary" in _built:
        return _built["binary"]
    missing = sorted({package for path, package in REQUIRED if not os.path.exists(path)})
    if missing:
        raise AssertionError(f"Go packages missing ({', '.join(missing)}): " + HOW_TO)
    binary = os.path.join(directory, "apiserver-standin")
    with go_build_cache(os.path.join(directory, "gocache")) as gocache:
        env = dict(os.environ, PATH="/usr/bin:/bin", GOCACHE=gocache, HOME=directory)
        result = subprocess.run(["bash", BUILD_SCRIPT, binary], capture_output=True, env=env,
                                timeout=600)
    if result.returncode != 0:
        raise AssertionError(f"{BUILD_SCRIPT} failed:\n" + result.stderr.decode(errors="replace"))
    _built["binary"] = binary
    return binary


class StandIn:
    """apiserver-standin on one socket; each command's JSON line and exit status."""

    def __init__(self, binary, socket, store):
        self.binary, self.socket, self.store = binary, socket, store

    def run(self, command, *args, check=True):
        result = subprocess.run([self.binary, command, "--socket", self.socket,
                                 "--store", self.store, *args],
                                capture_output=True, text=True, timeout=120)
        lines = result.stdout.strip().splitlines()
        figures = json.loads(lines[-1]) if lines else {}
        if check and result.returncode != 0:
            raise AssertionError(f"{command} exited {result.returncode}: {result.stdout}"
                                 f"{result.stderr}")
        return figures

    def healthz(self):
        return self.run("status", "--timeout", "1s", check=False)


class AsKubeApiserverSees(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="standin-", dir=os.environ.get("TEST_TMPDIR"))
        cls.binary = build_standin(cls.home)

    def setUp(self):
        self.server, self.socket = kms_server(extra_args=["--max-staleness", "2s"])
        self.server.start()
        self.admin = AdminClient(self.server)
        self.store = os.path.join(tempfile.mkdtemp(dir=self.home), "objects.jsonl")
        self.standin = StandIn(self.binary, self.socket, self.store)

    def tearDown(self):
        self.admin.close()
        self.server.stop()

    def rotate(self):
        self.admin.RotateKey(stubs()[0].KeyRef(tenant="acme", key="k8s"))

    def test_objects_sealed_rotated_and_read_back_after_a_restart(self):
        new_tenant(self.admin, "acme", keys=("k8s",))
        first = self.standin.run("seal", "--objects", "10000")
        self.assertEqual((first["sealed"], first["encrypt_calls"]), (10000, 1))
        self.rotate()
        status = self.standin.healthz()
        self.assertTrue(status["ok"], status)
        self.assertNotEqual(status["key_id"], first["key_id"])
        second = self.standin.run("seal", "--objects", "100")
        self.assertEqual(second["key_id"], status["key_id"])
        # A restarted API server: one Decrypt per seed, every object read and checked.
        self.server.stop()
        self.server.start()
        read = self.standin.run("open", "--concurrency", "50")
        self.assertEqual((read["objects"], read["opened"], read["decrypt_calls"]),
                         (10100, 10100, 2))
        self.assertEqual(read["stale"], 10000)  # a storage migration would rewrite them
        self.assertEqual(read["current_key_id"], second["key_id"])

    def test_an_encrypt_under_another_key_id_than_status_is_discarded(self):
        new_tenant(self.admin, "acme", keys=("k8s",))
        flag = os.path.join(self.home, "rotated")
        seal = subprocess.Popen([self.binary, "seal", "--socket", self.socket, "--store",
                                 self.store, "--objects", "5", "--pause-after-status", flag],
                                stdout=subprocess.PIPE, text=True)
        self.assertEqual(json.loads(seal.stdout.readline()), {"paused": True})
        self.rotate()  # between its Status and its Encrypt
        open(flag, "w").close()
        figures = json.loads(seal.stdout.readline())
        seal.wait(timeout=30)
        seal.stdout.close()
        self.assertEqual(seal.returncode, 1)
        self.assertEqual(figures["stage"], "encrypt")
        self.assertIn("differs from Status's", figures["error"])
        self.assertIn("answer discarded", figures["error"])
        self.assertFalse(os.path.exists(self.store), "nothing sealed with a discarded seed")

    def test_status_follows_the_key_the_keystore_and_the_socket(self):
        missing = self.standin.healthz()
        self.assertFalse(missing["ok"])
        self.assertIn('key "acme/k8s" does not exist', missing["error"])
        new_tenant(self.admin, "acme", keys=("k8s",))
        self.assertTrue(self.standin.healthz()["ok"])
        self.standin.run("seal", "--objects", "10")

        keystore = os.path.join(self.server.data_dir, "keystore.sbx")
        os.rename(keystore, keystore + ".away")
        wait_for(lambda: not self.standin.healthz()["ok"], "Status failing", seconds=10)
        self.assertIn("max-staleness", self.standin.healthz()["error"])
        os.rename(keystore + ".away", keystore)
        wait_for(lambda: self.standin.healthz()["ok"], "Status ok again", seconds=10)

        # An old version disabled: its objects no longer open, and say why.
        self.rotate()
        self.admin.DisableKeyVersion(stubs()[0].KeyVersionRef(tenant="acme", key="k8s",
                                                              version=1))
        refused = self.standin.run("open", check=False)
        self.assertFalse(refused["ok"])
        self.assertIn("FailedPrecondition", " ".join(refused["errors"]))
        self.admin.EnableKeyVersion(stubs()[0].KeyVersionRef(tenant="acme", key="k8s",
                                                             version=1))
        self.assertEqual(self.standin.run("open")["opened"], 10)

        self.server.stop()  # the socket goes with it
        gone = self.standin.healthz()
        self.assertFalse(gone["ok"])
        self.assertIn("DeadlineExceeded", gone["error"])
        self.server.start()
        wait_for(lambda: self.standin.healthz()["ok"], "Status ok after a restart")
        self.assertEqual(self.standin.run("open")["opened"], 10)


class OperationsGuide(unittest.TestCase):
    """docs/OPERATIONS.md's "Try it on one machine", run as written (on a free port
    instead of 50051), with sealbox-server, sealbox and the stand-in on PATH."""

    def test_the_guide_runs_as_written(self):
        with open("docs/OPERATIONS.md") as f:
            section = f.read().split("### Try it on one machine", 1)[1]
        script = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
        script = script.replace("127.0.0.1:50051", f"127.0.0.1:{free_port()}")
        # Under /tmp: the socket's path must fit a unix socket's 107 bytes.
        work = tempfile.mkdtemp(prefix="sbx-guide-", dir="/tmp")
        self.addCleanup(shutil.rmtree, work, True)
        bin_dir = os.path.join(work, "bin")
        os.mkdir(bin_dir)
        home = tempfile.mkdtemp(prefix="standin-", dir=os.environ.get("TEST_TMPDIR"))
        for name, command in [("sealbox-server", SERVER), ("sealbox", CLI),
                              ("apiserver-standin", [build_standin(home)])]:
            path = os.path.join(bin_dir, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\nexec %s \"$@\"\n" % " ".join(map(shlex.quote, command)))
            os.chmod(path, 0o755)
        run_dir = os.path.join(work, "try")
        os.mkdir(run_dir)
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=run_dir,
                                env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = [json.loads(line) for line in result.stdout.splitlines()
                 if line.startswith("{")]
        # status (missing), status, seal, status, seal, open, open (a version disabled),
        # open, status (the key disabled), status
        self.assertEqual(len(lines), 10, result.stdout)
        self.assertFalse(lines[0]["ok"])
        self.assertIn('key "kube/secrets" does not exist', lines[0]["error"])
        self.assertRegex(lines[1]["key_id"], r"^sealbox:kube/secrets:v1:[0-9a-f]{16}$")
        self.assertEqual(lines[2]["sealed"], 10000)
        self.assertRegex(lines[3]["key_id"], r"^sealbox:kube/secrets:v2:")
        self.assertEqual((lines[5]["opened"], lines[5]["decrypt_calls"]), (10100, 2))
        self.assertFalse(lines[6]["ok"])
        self.assertIn("version 1", " ".join(lines[6]["errors"]))
        self.assertIn("disabled", " ".join(lines[6]["errors"]))
        self.assertEqual(lines[7]["opened"], 10100)
        self.assertFalse(lines[8]["ok"])
        self.assertIn('key "kube/secrets" is disabled in sealbox', lines[8]["error"])
        self.assertIn("sealbox admin key enable-key kube secrets", lines[8]["error"])
        self.assertEqual(lines[9]["key_id"], lines[3]["key_id"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
