"""Seals through ADDRESS with a token as fast as it can until the call is refused as
UNAUTHENTICATED (the token's revocation in force there) or SECONDS pass, keeping
every answer; once per line "TOKEN SECONDS" read from stdin, until stdin ends. For
each: prints "ready" once a call was served, so the caller can start a fault with the
poller already running; then, when done, one JSON line for the caller to judge: every
call's start (taken before it is sent) and end, as time.monotonic() (CLOCK_MONOTONIC,
the same clock in every process of the machine), its code and its detail. A process
of its own, so that the test's load (threads under one interpreter lock) does not
delay the moments it sees; one for all of a test's cycles, since starting Python with
gRPC took longer than a cycle's cut.

    poll_until_refused.py ADDRESS KEY
"""
import json
import os
import sys
import time

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
from harness import bearer, data_grpc, data_pb2  # noqa: E402


def poll(address, token, key, seconds):
    """Polls on a channel of its own, as a new client would."""
    with grpc.insecure_channel(address) as channel:
        stub = data_grpc.CryptoStub(channel)
        request = data_pb2.SealRequest(key=key, plaintext=b"poll")
        calls, details = [], {}  # details: text -> index, so each is sent once
        ready = False
        end = time.monotonic() + float(seconds)
        while time.monotonic() < end:
            start = time.monotonic()
            try:
                stub.Seal(request, metadata=bearer(token), timeout=5)
                code, detail = "OK", ""
            except grpc.RpcError as error:
                code, detail = error.code().name, error.details() or ""
            calls.append((round(start, 6), round(time.monotonic(), 6), code,
                          details.setdefault(detail, len(details))))
            if code == "OK" and not ready:
                print("ready", flush=True)
                ready = True
            if code == "UNAUTHENTICATED":
                break
    print(json.dumps({"calls": calls, "details": list(details)}), flush=True)


def main(address, key):
    for line in sys.stdin:
        token, seconds = line.split()
        poll(address, token, key, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
