"""Starts the real sealbox-server binary on a loopback port and drives it with the
real `sealbox` CLI. Used by the end-to-end tests in this folder.

SEALBOX_E2E_SERVER and SEALBOX_E2E_CLI, when set, are the command lines to run
instead of the Bazel-built binaries: `tools/dev test` runs these tests against the
arm64 build under qemu-aarch64 that way ("qemu-aarch64 -L ROOTFS .../sealbox-server").
"""
import hashlib
import importlib
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

SERVER = shlex.split(os.environ.get("SEALBOX_E2E_SERVER", "")) or [
    os.path.abspath("server/sealbox-server")]
CLI = shlex.split(os.environ.get("SEALBOX_E2E_CLI", "")) or [os.path.abspath("client/sealbox")]


PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../proto")


def load_stubs(*names):
    """The gRPC stubs of sealbox/v1/NAME.proto for each NAME ("data", "admin"), compiled
    into a temporary folder: (NAME_pb2, NAME_pb2_grpc, ...) in the order given."""
    from grpc_tools import protoc  # only the tests that make raw gRPC calls need it
    out = tempfile.mkdtemp(prefix="sealbox-stubs-", dir=os.environ.get("TEST_TMPDIR"))
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    for name in names:
        rc = protoc.main(["protoc", f"-I{PROTO_DIR}", f"-I{include}", f"--python_out={out}",
                          f"--grpc_python_out={out}",
                          os.path.join(PROTO_DIR, f"sealbox/v1/{name}.proto")])
        if rc != 0:
            raise RuntimeError(f"protoc failed on {name}.proto")
    sys.path.insert(0, out)
    return tuple(importlib.import_module(f"sealbox.v1.{name}{suffix}")
                 for name in names for suffix in ("_pb2", "_pb2_grpc"))


def wait_for(condition, what, seconds=20):
    """Polls `condition` until it is true; AssertionError naming `what` after `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds} s: {what}")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_status(pid, field):
    """A /proc/PID/status field in KiB (VmRSS, VmHWM)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


class Server:
    """One sealbox-server process with its own home: KEK, admin token, log and (unless
    given one) data directory. Several may share a data directory (give them the same
    `kek` and `admin_token`), and one may be started again after a stop or a kill."""

    def __init__(self, data_dir=None, extra_args=(), kek=None, admin_token=None,
                 wrapper=()):
        self.home = tempfile.mkdtemp(prefix="sealbox-e2e-", dir=os.environ.get("TEST_TMPDIR"))
        self.data_dir = data_dir or os.path.join(self.home, "data")
        self.kek_file = os.path.join(self.home, "kek")
        with open(self.kek_file, "wb") as f:
            f.write(kek or os.urandom(32))
        self.admin_token = admin_token or "e2e-admin-" + os.urandom(8).hex()
        self.admin_token_file = os.path.join(self.home, "admin-token")
        with open(self.admin_token_file, "w") as f:
            f.write(self.admin_token + "\n")
        self.extra_args = list(extra_args)
        self.wrapper = list(wrapper)  # a command the server runs under (prlimit ...)
        self.process = None
        self.port = None
        self.metrics_port = None

    def start(self, listen="127.0.0.1:0", seconds=20):
        """Starts it and waits for its "serving" line; RuntimeError with its output if
        it exits or does not serve within `seconds` (then it is killed)."""
        self.log_path = os.path.join(self.home, f"server-{time.time_ns()}.log")
        self.log = open(self.log_path, "w+")
        self.process = subprocess.Popen(
            self.wrapper + SERVER + ["--listen", listen, "--data-dir", self.data_dir,
             "--kek-file", self.kek_file, "--admin-token-file", self.admin_token_file,
             "--init", "--metrics-listen", "127.0.0.1:0"] + self.extra_args,
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + seconds
        while time.time() < deadline:
            text = self.output()
            port = re.search(r'"event":"serving","port":(\d+)', text)
            metrics = re.search(r'"metrics_port":(\d+)', text)
            if port and metrics:
                self.port, self.metrics_port = int(port.group(1)), int(metrics.group(1))
                return self
            if self.process.poll() is not None:
                self.log.close()
                raise RuntimeError(f"server exited {self.process.returncode}: {text}")
            time.sleep(0.05)
        self.process.kill()
        self.process.wait()
        self.log.close()
        raise RuntimeError(f"server did not serve within {seconds} s: " + self.output())

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=timeout)
        self.log.close()
        return self.process.returncode

    def output(self):
        with open(self.log_path) as log:
            return log.read()

    def cli(self, *args, token=None, input=None, check=True, extra_env=None):
        """Runs `sealbox --server ADDRESS ARGS`; returns the CompletedProcess."""
        env = dict(os.environ)
        env.pop("SEALBOX_TOKEN", None)
        if token is not None:
            env["SEALBOX_TOKEN"] = token
        env.update(extra_env or {})
        result = subprocess.run(CLI + ["--server", self.address] + list(args),
                                input=input, capture_output=True, env=env, timeout=300)
        if check and result.returncode != 0:
            raise AssertionError(f"sealbox {' '.join(args)} exited {result.returncode}: "
                                 f"{result.stderr.decode(errors='replace')}")
        return result

    def admin(self, *args, check=True):
        return self.cli("admin", *args, token=self.admin_token, check=check)

    def new_tenant(self, name, key="default", extra_key_args=()):
        """Creates a tenant with one key; returns a token for it."""
        self.admin("tenant", "create", name)
        self.admin("key", "create", name, key, *extra_key_args)
        # `token issue` prints just the token on stdout (its id goes to stderr).
        return self.admin("token", "issue", name).stdout.decode().strip()
