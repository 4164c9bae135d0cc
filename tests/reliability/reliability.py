"""What the reliability tests share: the end-to-end tests' Server (tests/e2e/harness.py:
the real binary on loopback), gRPC stubs generated from the .proto files at run time,
admin and data clients with deadlines, a free fixed port, and a kill that never
raises."""
import os
import socket
import sys

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
from harness import Server, load_stubs  # noqa: E402,F401 - the tests import Server from here

DEADLINE = 30  # seconds, on every call: no test waits forever

admin_pb2, admin_grpc, data_pb2, data_grpc = load_stubs("admin", "data")


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
