"""The container images: the amd64 image run with podman and driven by the host's
`sealbox` CLI, and the arm64 image's metadata and binaries. Run by `tools/dev test`
after `tools/dev image` (it needs root, podman and the built images, so it is not a
Bazel test):

  SEALBOX_PODMAN   the podman command line, storage options included
  SEALBOX_IMAGE    the amd64 image (localhost/sealbox:amd64)
  SEALBOX_ARM64_ARCHIVE  the arm64 image as an OCI archive (tools/dev image writes it)
  SEALBOX_E2E_CLI  the host's sealbox binary
"""
import gzip
import io
import json
import os
import shlex
import signal
import subprocess
import sys
import tarfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import Server, file_sha256, read_bytes  # noqa: E402

PODMAN = shlex.split(os.environ.get("SEALBOX_PODMAN", "podman"))
IMAGE = os.environ.get("SEALBOX_IMAGE", "localhost/sealbox:amd64")
ARM64_ARCHIVE = os.environ.get("SEALBOX_ARM64_ARCHIVE", "")
IMAGE_UID = 65532
ELF_MACHINE_AARCH64 = 183


def podman(*args, check=True):
    return subprocess.run(PODMAN + list(args), capture_output=True, text=True, check=check,
                          timeout=120)


class ContainerServer(Server):
    """sealbox-server inside the image: a read-only root, no capabilities, the image's
    own user, the data directory a volume and the secrets read-only files."""

    def __init__(self, data_dir=None, kek=None):
        super().__init__(data_dir=data_dir, kek=kek)
        os.makedirs(self.data_dir, exist_ok=True)
        os.chown(self.data_dir, IMAGE_UID, IMAGE_UID)
        for secret in (self.kek_file, self.admin_token_file):
            os.chmod(secret, 0o444)
        self.name = None

    def start(self, listen="127.0.0.1:0"):
        self.name = "sealbox-test-" + os.urandom(4).hex()
        podman("run", "--detach", "--name", self.name, "--network", "host", "--read-only",
               "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
               "--volume", f"{self.data_dir}:/var/lib/sealbox",
               "--volume", f"{self.kek_file}:/etc/sealbox/kek:ro",
               "--volume", f"{self.admin_token_file}:/etc/sealbox/admin-token:ro",
               IMAGE, "--listen", listen, "--data-dir", "/var/lib/sealbox",
               "--kek-file", "/etc/sealbox/kek", "--admin-token-file",
               "/etc/sealbox/admin-token", "--init", "--drain-seconds", "10")
        deadline = time.time() + 30
        while time.time() < deadline:
            text = self.output()
            for line in text.splitlines():
                if '"event":"serving"' in line:
                    self.port = json.loads(line)["port"]
                    return self
            state = podman("inspect", "--format", "{{.State.Running}}", self.name).stdout
            if state.strip() != "true":
                raise RuntimeError("the container exited: " + text)
            time.sleep(0.1)
        raise RuntimeError("the container did not start serving: " + self.output())

    def output(self):
        logs = podman("logs", self.name, check=False)
        return logs.stdout + logs.stderr

    def exec(self, *args):
        return podman("exec", self.name, *args, check=False)

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Sends `sig` and returns the server's exit status; removes the container."""
        podman("kill", "--signal", sig.name, self.name)
        code = int(podman("wait", self.name).stdout.strip())
        self.logs_at_exit = self.output()
        podman("rm", self.name)
        return code


class Amd64Image(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ContainerServer().start()
        cls.addClassCleanup(cls.server.stop)
        cls.token = cls.server.new_tenant("acme")

    def test_seal_open_and_a_64_mib_stream_through_the_container(self):
        sealed = self.server.cli("seal", "--key", "default", token=self.token,
                                 input=b"through the image").stdout
        self.assertEqual(sealed[:1], b"\x01")
        self.assertEqual(self.server.cli("open", "--key", "default", token=self.token,
                                         input=sealed).stdout, b"through the image")
        plain = os.path.join(self.server.home, "big.bin")
        with open(plain, "wb") as f:
            for _ in range(64):
                f.write(os.urandom(1 << 20))
        self.server.cli("seal", "--key", "default", "-i", plain, "-o", plain + ".sealed",
                        token=self.token)
        with open(plain + ".sealed", "rb") as f:
            self.assertEqual(f.read(1), b"\x02")  # a stream ciphertext
        self.server.cli("open", "--key", "default", "-i", plain + ".sealed",
                        "-o", plain + ".opened", token=self.token)
        self.assertEqual(file_sha256(plain + ".opened"), file_sha256(plain))

    def test_health_probe_inside_the_image(self):
        probe = self.server.exec("sealbox", "health", "--server",
                                 f"127.0.0.1:{self.server.port}")
        self.assertEqual((probe.returncode, probe.stdout), (0, "SERVING\n"), probe.stderr)

    def test_runs_as_its_own_user_without_a_shell(self):
        config = json.loads(podman("image", "inspect", IMAGE).stdout)[0]["Config"]
        self.assertEqual(config["User"], f"{IMAGE_UID}:{IMAGE_UID}")
        keystore = os.stat(os.path.join(self.server.data_dir, "keystore.sbx"))
        self.assertEqual((keystore.st_uid, keystore.st_mode & 0o777), (IMAGE_UID, 0o600))
        self.assertNotEqual(self.server.exec("/bin/sh", "-c", "true").returncode, 0)


class Amd64Lifecycle(unittest.TestCase):
    def test_sigterm_stops_cleanly_and_the_data_survives(self):
        server = ContainerServer().start()
        try:
            token = server.new_tenant("acme")
            sealed = server.cli("seal", "--key", "default", token=token, input=b"kept").stdout
        finally:
            exit_status = server.stop(signal.SIGTERM)
        self.assertEqual(exit_status, 0)
        self.assertIn('"event":"draining"', server.logs_at_exit)
        self.assertIn('"event":"stopped"', server.logs_at_exit)
        again = ContainerServer(data_dir=server.data_dir, kek=read_bytes(server.kek_file))
        again.admin_token, again.admin_token_file = server.admin_token, server.admin_token_file
        again.start()
        self.addCleanup(again.stop)
        self.assertEqual(again.cli("open", "--key", "default", token=token,
                                   input=sealed).stdout, b"kept")


class Arm64Image(unittest.TestCase):
    """The arm64 image as `tools/dev image` exported it (an OCI archive): its config
    says arm64, its binaries are AArch64 ELF files, and it lists its Debian packages."""

    def setUp(self):
        if not ARM64_ARCHIVE:
            self.fail("SEALBOX_ARM64_ARCHIVE is not set (tools/dev test sets it)")
        self.archive = tarfile.open(ARM64_ARCHIVE)
        self.addCleanup(self.archive.close)

    def blob(self, digest):
        return self.archive.extractfile("blobs/" + digest.replace(":", "/")).read()

    def test_manifest_and_binaries_are_arm64(self):
        index = json.loads(self.archive.extractfile("index.json").read())
        manifest = json.loads(self.blob(index["manifests"][0]["digest"]))
        config = json.loads(self.blob(manifest["config"]["digest"]))
        self.assertEqual((config["architecture"], config["os"]), ("arm64", "linux"))
        self.assertEqual(config["config"]["User"], f"{IMAGE_UID}:{IMAGE_UID}")
        binaries = ("usr/local/bin/sealbox-server", "usr/local/bin/sealbox")
        grpc_status = "var/lib/dpkg/status.d/libgrpc29"
        os_release = "usr/lib/os-release"
        found = {}
        for layer in manifest["layers"]:
            data = self.blob(layer["digest"])
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            with tarfile.open(fileobj=io.BytesIO(data)) as files:
                for name in binaries + (grpc_status, os_release):
                    try:
                        found[name] = files.extractfile(name).read()
                    except KeyError:
                        continue
        for name in binaries:
            header = found.get(name, b"")
            self.assertEqual(header[:4], b"\x7fELF", name)
            self.assertEqual(int.from_bytes(header[18:20], "little"), ELF_MACHINE_AARCH64, name)
        # The package list scanners read: here, the arm64 gRPC library's entry.
        status = found.get(grpc_status, b"").decode()
        for field in ("Package: libgrpc29", "Architecture: arm64", "Version: 1.51",
                      "Status: install ok installed"):
            self.assertIn(field, status)
        # And which distribution they come from (scanners match Debian 12's advisories).
        self.assertIn("VERSION_CODENAME=bookworm", found.get(os_release, b"").decode())


if __name__ == "__main__":
    unittest.main()
