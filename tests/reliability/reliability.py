"""What the reliability tests share: a Server (the real binary on loopback, with its
own data directory, KEK and admin token), gRPC stubs generated from the .proto files
at run time, admin and data clients with deadlines, and a free fixed port.

SEALBOX_E2E_SERVER, when set, is the server command line to run instead of the
Bazel-built binary (as for tests/e2e)."""
import importlib
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

import grpc
from grpc_tools import protoc

SERVER = shlex.split(os.environ.get("SEALBOX_E2E_SERVER", "")) or [
    os.path.abspath("server/sealbox-server")]
PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../proto")
DEADLINE = 30  # seconds, on every call: no test waits forever


def load_stubs():
    """(admin_pb2, admin_grpc, data_pb2, data_grpc), compiled into a temporary folder."""
    out = tempfile.mkdtemp(prefix="sealbox-stubs-", dir=os.environ.get("TEST_TMPDIR"))
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    for name in ("admin", "data"):
        rc = protoc.main(["protoc", f"-I{PROTO_DIR}", f"-I{include}", f"--python_out={out}",
                          f"--grpc_python_out={out}",
                          os.path.join(PROTO_DIR, f"sealbox/v1/{name}.proto")])
        if rc != 0:
            raise RuntimeError(f"protoc failed on {name}.proto")
    sys.path.insert(0, out)
    return tuple(importlib.import_module(f"sealbox.v1.{m}")
                 for m in ("admin_pb2", "admin_pb2_grpc", "data_pb2", "data_pb2_grpc"))


admin_pb2, admin_grpc, data_pb2, data_grpc = load_stubs()


class Server:
    """One sealbox-server process. Several may share a data directory (and KEK and
    admin token: pass them), and one may be started again and again."""

    def __init__(self, data_dir=None, kek=None, admin_token=None, extra_args=()):
        self.home = tempfile.mkdtemp(prefix="sealbox-rel-", dir=os.environ.get("TEST_TMPDIR"))
        self.data_dir = data_dir or os.path.join(self.home, "data")
        self.kek_file = os.path.join(self.home, "kek")
        with open(self.kek_file, "wb") as f:
            f.write(kek or os.urandom(32))
        self.admin_token = admin_token or "rel-admin-" + os.urandom(8).hex()
        self.admin_token_file = os.path.join(self.home, "admin-token")
        with open(self.admin_token_file, "w") as f:
            f.write(self.admin_token + "\n")
        self.extra_args = list(extra_args)
        self.process = self.log = self.port = None

    def start(self, listen="127.0.0.1:0", seconds=30):
        """Starts it and waits for its "serving" line; RuntimeError with its output if
        it exits or does not serve within `seconds`."""
        self.log_path = os.path.join(self.home, f"server-{time.time_ns()}.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            SERVER + ["--listen", listen, "--data-dir", self.data_dir, "--init",
                      "--kek-file", self.kek_file, "--admin-token-file",
                      self.admin_token_file] + self.extra_args,
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + seconds
        while time.time() < deadline:
            serving = re.search(r'"event":"serving","port":(\d+)', self.output())
            if serving:
                self.port = int(serving.group(1))
                return self
            if self.process.poll() is not None:
                self.log.close()
                raise RuntimeError(f"server exited {self.process.returncode}: {self.output()}")
            time.sleep(0.02)
        kill(self)
        raise RuntimeError(f"server did not start in {seconds} s: {self.output()}")

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def stop(self, timeout=60):
        """SIGTERM (it drains) and its exit status."""
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        self.log.close()
        return code

    def output(self):
        with open(self.log_path) as log:
            return log.read()


def bearer(token):
    return [("authorization", f"Bearer {token}")]


class AdminClient:
    """The admin plane of one server: admin.Method(request) with the admin token."""

    def __init__(self, server):
        self.channel = grpc.insecure_channel(server.address)
        self.stub = admin_grpc.AdminStub(self.channel)
        self.metadata = bearer(server.admin_token)

    def __getattr__(self, method):
        call = getattr(self.stub, method)
        return lambda request: call(request, metadata=self.metadata, timeout=DEADLINE)

    def close(self):
        self.channel.close()


class CryptoClient:
    """The data plane of one server; `token` may also be given per call."""

    def __init__(self, address, token=None, options=()):
        self.channel = grpc.insecure_channel(address, options=list(options))
        self.stub = data_grpc.CryptoStub(self.channel)
        self.metadata = bearer(token)

    def seal(self, key, plaintext, aad=b"", token=None):
        return self.stub.Seal(data_pb2.SealRequest(key=key, plaintext=plaintext,
                                                   associated_data=aad),
                              metadata=bearer(token) if token else self.metadata,
                              timeout=DEADLINE)

    def open(self, key, ciphertext, aad=b"", token=None):
        return self.stub.Open(data_pb2.OpenRequest(key=key, ciphertext=ciphertext,
                                                   associated_data=aad),
                              metadata=bearer(token) if token else self.metadata,
                              timeout=DEADLINE).plaintext

    def close(self):
        self.channel.close()


def new_tenant(admin, name, keys=("default",)):
    """Creates a tenant with keys; returns a token for it."""
    admin.CreateTenant(admin_pb2.CreateTenantRequest(name=name))
    for key in keys:
        admin.CreateKey(admin_pb2.CreateKeyRequest(tenant=name, key=key))
    return admin.IssueToken(admin_pb2.IssueTokenRequest(tenant=name)).token


def free_port():
    """A loopback port free right now (the kernel's pick), for a fixed --listen."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kill(server):
    """SIGKILL, wait, close its log; for crashes and for cleanup: never raises."""
    try:
        if server.process and server.process.poll() is None:
            server.process.kill()
            server.process.wait(timeout=30)
        if server.log:
            server.log.close()
    except Exception as error:  # noqa: BLE001 - cleanup must go on
        print(f"cleanup: {error}")
