"""What the reliability tests share: the end-to-end tests' Server (tests/e2e/harness.py:
the real binary on loopback), gRPC stubs generated from the .proto files at run time,
admin and data clients with deadlines, a free fixed port, and a kill that never
raises."""
import os
import sys


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
# The tests import these from here.
from harness import (  # noqa: E402,F401
    DEADLINE, AdminClient, CryptoClient, Server, admin_pb2, bearer, data_pb2, free_port,
    load_stubs, new_tenant)

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
