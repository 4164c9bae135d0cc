"""Seals through ADDRESS with TOKEN as fast as it can until the call is refused, then
prints the refusal's time.monotonic() (CLOCK_MONOTONIC, the same clock in every
process of the machine) and the code. A process of its own, so that the test's load
(threads under one interpreter lock) does not delay the moment it sees.

    poll_until_refused.py ADDRESS TOKEN KEY SECONDS
"""
import os
import sys
import time

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
from harness import bearer, data_grpc, data_pb2  # noqa: E402


def main(address, token, key, seconds):
    stub = data_grpc.CryptoStub(grpc.insecure_channel(address))
    request = data_pb2.SealRequest(key=key, plaintext=b"poll")
    print("ready", flush=True)
    end = time.monotonic() + float(seconds)
    while time.monotonic() < end:
        try:
            stub.Seal(request, metadata=bearer(token), timeout=5)
        except grpc.RpcError as error:
            print(f"{time.monotonic():.6f} {error.code().name}", flush=True)
            return 0
    print("never refused", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
