"""The container images: the amd64 image run with podman and driven by the host's
`sealbox` CLI, deploy/kubernetes/kms/static-pod.yaml played by `podman kube play` and
called on its KMS socket from the host, and the arm64 image's metadata and binaries.
Run by `tools/dev test` after `tools/dev image` (it needs root, podman and the built
images, so it is not a Bazel test):

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
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import Server, file_sha256, free_port, read_bytes  # noqa: E402

PODMAN = shlex.split(os.environ.get("SEALBOX_PODMAN", "podman"))
IMAGE = os.environ.get("SEALBOX_IMAGE", "localhost/sealbox:amd64")
ARM64_ARCHIVE = os.environ.get("SEALBOX_ARM64_ARCHIVE", "")
IMAGE_UID = 65532
ELF_MACHINE_AARCH64 = 183
STATIC_POD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy",
                          "kubernetes", "kms", "static-pod.yaml")


def podman(*args, check=True):
    result = subprocess.run(PODMAN + list(args), capture_output=True, text=True, timeout=120)
    if check and result.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args)} exited {result.returncode}: "
                           f"{result.stderr.strip()}")
    return result


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


def kms_client(path):
    """tests/kms's KMS v2 client (stubs of proto/k8s/kms/v2/kms.proto, compiled when
    first imported) on the unix socket `path`, as kube-apiserver dials it."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kms"))
    from kms_socket_test import Kms
    return Kms(path)


class KmsStaticPod(Server):
    """deploy/kubernetes/kms/static-pod.yaml under `podman kube play`, changed only
    where this machine is not a control-plane node: its hostPath volumes are files and
    directories of this server's home, made as README.md makes them on a node (owned
    by the image's user); its image is IMAGE; its pod name is unique and its TCP port
    free, since other tests share this machine's host network and podman storage; and
    its probes are run by the test through `podman exec`, since podman 4.3 turns the
    liveness probe into a healthcheck that needs /bin/sh (the image has none) and
    systemd timers (this sandbox has none). podman ignores priorityClassName, the
    namespace and terminationGracePeriodSeconds (stop() uses it), and applies the
    rest: host network, user, read-only root, capabilities, seccomp, mounts."""

    def __init__(self):
        super().__init__()
        try:
            import yaml  # only this class reads a manifest
        except ImportError:
            raise RuntimeError("KmsStaticPod reads static-pod.yaml with PyYAML: "
                               "apt-get install python3-yaml") from None
        with open(STATIC_POD) as f:
            pod = yaml.safe_load(f)
        container = pod["spec"]["containers"][0]
        args = list(container["args"])
        self.flag = lambda name: next(
            (a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")), None)
        self.grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
        os.chmod(self.home, 0o755)  # as /run is: the socket's own directory guards it
        self.socket_dir = os.path.join(self.home, "kms")
        self.socket = os.path.join(self.socket_dir, os.path.basename(self.flag("kms-socket")))
        os.makedirs(self.data_dir, mode=0o700)
        os.mkdir(self.socket_dir, 0o750)
        for path in (self.data_dir, self.socket_dir, self.kek_file, self.admin_token_file):
            os.chown(path, IMAGE_UID, IMAGE_UID)
        for secret in (self.kek_file, self.admin_token_file):
            os.chmod(secret, 0o400)

        self.name = "sealbox-kms-test-" + os.urandom(4).hex()
        self.container = f"{self.name}-{container['name']}"
        pod["metadata"]["name"] = self.name
        container["image"] = IMAGE
        # Each mount's host side, by what the flags put in it.
        host = {os.path.dirname(self.flag("kms-socket")): self.socket_dir,
                self.flag("data-dir"): self.data_dir, self.flag("kek-file"): self.kek_file,
                self.flag("admin-token-file"): self.admin_token_file}
        for mount in container["volumeMounts"]:
            if mount["mountPath"] not in host:
                raise AssertionError(f"static-pod.yaml mounts {mount['mountPath']}: "
                                     "this test does not know what to put there")
            volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
            volume["hostPath"]["path"] = host[mount["mountPath"]]
        self.port = free_port()
        listen, here = self.flag("listen"), f"127.0.0.1:{self.port}"
        container["args"] = [a.replace(listen, here) for a in args]
        self.probes = {probe: [a.replace(listen, here)
                               for a in container.pop(probe)["exec"]["command"]]
                       for probe in ("startupProbe", "readinessProbe", "livenessProbe")}
        self.file = os.path.join(self.home, "static-pod.yaml")
        with open(self.file, "w") as f:
            yaml.safe_dump(pod, f, sort_keys=False)

    def play(self):
        """Plays the pod and waits for its server's "serving" line."""
        podman("kube", "play", self.file)
        deadline = time.time() + 30
        while time.time() < deadline:
            if '"event":"serving"' in self.output():
                return self
            state = podman("inspect", "--format", "{{.State.Running}}", self.container).stdout
            if state.strip() != "true":
                raise RuntimeError("the pod's server exited: " + self.output())
            time.sleep(0.1)
        raise RuntimeError("the pod's server did not start serving: " + self.output())

    def output(self):
        logs = podman("logs", self.container, check=False)
        return logs.stdout + logs.stderr

    def exec(self, *args):
        return podman("exec", self.container, *args, check=False)

    def pid(self):
        return int(podman("inspect", "--format", "{{.State.Pid}}", self.container).stdout)

    def stop(self):
        """As the kubelet stops a pod: SIGTERM, then its grace period (podman 4.3's
        `kube down` kills at once). Returns the server's exit status."""
        podman("pod", "stop", "--time", str(self.grace), self.name)
        self.logs_at_exit = self.output()
        return int(podman("inspect", "--format", "{{.State.ExitCode}}",
                          self.container).stdout.strip())

    def down(self):
        """Removes the pod, whatever state it is in; the tests' cleanup too."""
        podman("kube", "down", self.file, check=False)
        podman("pod", "rm", "--force", "--ignore", self.name, check=False)

    def create_key(self):
        """The tenant and key of --kms-key, through the pod's TCP listener, as README.md
        makes them on a node."""
        tenant, key = self.flag("kms-key").split("/")
        self.admin("tenant", "create", tenant)
        self.admin("key", "create", tenant, key)


class KmsStaticPodServes(unittest.TestCase):
    """The static pod as a node runs it; kube-apiserver's calls made from the host."""

    @classmethod
    def setUpClass(cls):
        cls.pod = KmsStaticPod()
        cls.addClassCleanup(shutil.rmtree, cls.pod.home, True)
        cls.addClassCleanup(cls.pod.down)
        cls.pod.play()
        cls.pod.create_key()
        cls.kms = kms_client(cls.pod.socket)
        cls.addClassCleanup(cls.kms.close)

    def test_status_then_a_seed_through_encrypt_and_decrypt(self):
        status = self.kms.status()
        self.assertEqual((status.version, status.healthz), ("v2", "ok"))
        self.assertTrue(status.key_id.startswith(f"sealbox:{self.pod.flag('kms-key')}:"),
                        status.key_id)
        seed = os.urandom(32)
        encrypted = self.kms.encrypt(seed)
        self.assertEqual(encrypted.key_id, status.key_id)
        self.assertEqual(self.kms.decrypt(encrypted.ciphertext, encrypted.key_id), seed)

    def test_probes_pass_inside_the_pod(self):
        for probe, command in self.pod.probes.items():
            result = self.pod.exec(*command)
            self.assertEqual(result.returncode, 0, f"{probe}: {result.stdout}{result.stderr}")
        self.assertEqual(self.pod.exec(*self.pod.probes["readinessProbe"]).stdout, "SERVING\n")

    def test_the_server_runs_as_its_security_context_says(self):
        with open(f"/proc/{self.pod.pid()}/status") as f:
            status = dict(line.split(":\t", 1) for line in f.read().splitlines())
        self.assertEqual(status["Uid"].split()[:2], [str(IMAGE_UID)] * 2)
        self.assertEqual(status["Gid"].split()[:2], [str(IMAGE_UID)] * 2)
        self.assertEqual(int(status["CapEff"], 16), 0, "capabilities: drop ALL")
        self.assertEqual(status["NoNewPrivs"], "1", "allowPrivilegeEscalation: false")
        self.assertEqual(status["Seccomp"], "2", "seccompProfile: RuntimeDefault (a filter)")
        info = json.loads(podman("inspect", self.pod.container).stdout)[0]
        self.assertTrue(info["HostConfig"]["ReadonlyRootfs"])
        self.assertEqual(info["HostConfig"]["NetworkMode"], "host")

    def test_files_the_server_made_on_the_node(self):
        socket_file = os.stat(self.pod.socket)
        self.assertTrue(stat.S_ISSOCK(socket_file.st_mode))
        self.assertEqual((socket_file.st_uid, socket_file.st_gid), (IMAGE_UID, IMAGE_UID))
        self.assertEqual(oct(stat.S_IMODE(socket_file.st_mode)),
                         oct(int(self.pod.flag("kms-socket-mode"), 8)))
        keystore = os.stat(os.path.join(self.pod.data_dir, "keystore.sbx"))
        self.assertEqual((keystore.st_uid, keystore.st_mode & 0o777), (IMAGE_UID, 0o600))

    def test_a_non_root_caller_needs_the_servers_group(self):
        # A non-root kube-apiserver gets in with supplementalGroups: [65532] (README.md);
        # any other user does not. (This test runs as root, which gets in regardless.)
        connect = ("import socket, sys\n"
                   "try:\n"
                   "    socket.socket(socket.AF_UNIX).connect(sys.argv[1])\n"
                   "except PermissionError:\n"
                   "    sys.exit(13)\n")
        nobody = 65534
        for groups, expected in (([IMAGE_UID], 0), ([], 13)):
            result = subprocess.run([sys.executable, "-c", connect, self.pod.socket],
                                    user=nobody, group=nobody, extra_groups=groups,
                                    capture_output=True, text=True, timeout=30)
            self.assertEqual(result.returncode, expected,
                             f"uid {nobody} with groups {groups}: {result.stderr}")


class KmsStaticPodLifecycle(unittest.TestCase):
    def test_killed_played_again_then_stopped_the_socket_goes_with_it(self):
        pod = KmsStaticPod()
        self.addCleanup(shutil.rmtree, pod.home, True)
        self.addCleanup(pod.down)
        pod.play()
        pod.create_key()
        kms = kms_client(pod.socket)
        try:
            sealed = kms.encrypt(b"s" * 32)
        finally:
            kms.close()
        # Killed (a crash, the OOM killer): its socket file stays behind.
        podman("pod", "kill", "--signal", "KILL", pod.name)
        pod.down()
        self.assertTrue(os.path.exists(pod.socket), "a killed server cannot remove its socket")
        # The kubelet starts it again: the dead socket is replaced, the keystore kept,
        # and the key_id is the same (kube-apiserver needs no new seed).
        pod.play()
        kms = kms_client(pod.socket)
        self.addCleanup(kms.close)
        status = kms.status()
        self.assertEqual((status.healthz, status.key_id), ("ok", sealed.key_id))
        self.assertEqual(kms.decrypt(sealed.ciphertext, sealed.key_id), b"s" * 32)
        self.assertEqual(pod.stop(), 0, pod.logs_at_exit)
        self.assertIn('"event":"stopped"', pod.logs_at_exit)
        self.assertFalse(os.path.exists(pod.socket), "a stopped server removes its socket")


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
