"""Restart under load: clients whose channels carry a gRPC retry policy (UNAVAILABLE,
5 attempts, exponential backoff) keep calling Seal, Open and SealStream while the
server gets SIGTERM (it drains in-flight calls) and a new server takes over the same
port and data directory, several times. No call fails, every request id gets exactly
one answer, and every Seal result opens to its own plaintext on the last server.
SEALBOX_RESTARTS sets the number of restarts (default 5)."""
import itertools
import json
import os
import signal
import sys
import threading
import time
import unittest

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reliability import (  # noqa: E402
    AdminClient, CryptoClient, Server, data_pb2, free_port, kill, new_tenant)

RESTARTS = int(os.environ.get("SEALBOX_RESTARTS", "5"))
CLIENTS = 8
DRAIN_SECONDS = 5

# What a client of sealbox should use: retry UNAVAILABLE (a draining or restarting
# server) with backoff. Seal, Open and Rewrap are safe to retry: a repeated Seal just
# gives another valid ciphertext of the same plaintext. CANCELLED too: gRPC servers
# (1.51, and still upstream: grpc/grpc#41785) end a call that reaches them after
# shutdown began with CANCELLED, not UNAVAILABLE. SEALBOX_RETRY_CODES=UNAVAILABLE
# shows those failures; SEALBOX_RETRY_CODES= (empty) runs without a retry policy.
RETRY_CODES = [c for c in os.environ.get("SEALBOX_RETRY_CODES",
                                         "UNAVAILABLE,CANCELLED").split(",") if c]
SERVICE_CONFIG = json.dumps({"methodConfig": [{
    "name": [{"service": "sealbox.v1.Crypto"}],
    "retryPolicy": {
        "maxAttempts": 5,
        "initialBackoff": "0.2s",
        "maxBackoff": "2s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": RETRY_CODES,
    },
}]})
CHANNEL_OPTIONS = [
    ("grpc.enable_retries", 1 if RETRY_CODES else 0),
    ("grpc.service_config", SERVICE_CONFIG if RETRY_CODES else "{}"),
    # Reconnect soon after the old server goes away (gRPC's default starts at 1 s).
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


class Load:
    """CLIENTS threads calling in a loop; every answer recorded by request id."""

    def __init__(self, address, token):
        self.address, self.token = address, token
        self.ids = itertools.count()
        self.lock = threading.Lock()
        self.answers = {}      # request id -> list of (kind, plaintext, ciphertext)
        self.failures = []     # (request id, kind, code, details)
        self.latencies = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(i,), daemon=True)
                        for i in range(CLIENTS)]

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=120)
        return not any(t.is_alive() for t in self.threads)

    def client(self, index):
        crypto = CryptoClient(self.address, self.token, CHANNEL_OPTIONS)
        stub, metadata = crypto.stub, crypto.metadata
        mine = []  # this client's sealed (ciphertext, aad, plaintext)
        try:
            while not self.stop.is_set():
                request_id = next(self.ids)
                aad = f"request-{request_id}".encode()
                kind = ("stream" if request_id % 7 == 0
                        else "open" if mine and request_id % 3 == 0 else "seal")
                started = time.time()
                try:
                    if kind == "seal":
                        plaintext = os.urandom(64) + aad
                        response = stub.Seal(
                            data_pb2.SealRequest(key="default", plaintext=plaintext,
                                                 associated_data=aad),
                            metadata=metadata, timeout=60)
                        answer = (kind, plaintext, response.ciphertext)
                        mine.append((response.ciphertext, aad, plaintext))
                    elif kind == "open":
                        ciphertext, sealed_aad, plaintext = mine[request_id % len(mine)]
                        response = stub.Open(
                            data_pb2.OpenRequest(key="default", ciphertext=ciphertext,
                                                 associated_data=sealed_aad),
                            metadata=metadata, timeout=60)
                        if response.plaintext != plaintext:
                            raise AssertionError(f"request {request_id}: wrong plaintext")
                        answer = (kind, plaintext, None)
                    else:
                        plaintext = os.urandom(48 << 10)
                        chunks = [data_pb2.SealStreamRequest(
                            start=data_pb2.StreamStart(key="default", associated_data=aad))]
                        chunks += [data_pb2.SealStreamRequest(plaintext_chunk=plaintext[i:i + 16384])
                                   for i in range(0, len(plaintext), 16384)]
                        call = stub.SealStream(iter(chunks), metadata=metadata, timeout=60)
                        ciphertext = b"".join(r.ciphertext_chunk for r in call)
                        answer = (kind, plaintext, ciphertext)
                    with self.lock:
                        self.answers.setdefault(request_id, []).append(answer)
                        self.latencies.append(time.time() - started)
                except grpc.RpcError as error:
                    with self.lock:
                        self.failures.append((request_id, kind, error.code(), error.details()))
        finally:
            crypto.close()


def start_on(port, kek, first):
    """A new server on the fixed port; retries while the old one still holds it."""
    server = Server(data_dir=first.data_dir, kek=kek, admin_token=first.admin_token,
                    extra_args=["--drain-seconds", str(DRAIN_SECONDS)])
    deadline = time.time() + 30
    while True:
        try:
            return server.start(listen=f"127.0.0.1:{port}")
        except RuntimeError as error:
            if "cannot listen" not in str(error) or time.time() > deadline:
                raise
            time.sleep(0.02)


class RestartUnderLoad(unittest.TestCase):
    def test_sigterm_and_restart_on_the_same_port(self):
        kek, port = os.urandom(32), free_port()
        first = Server(kek=kek, extra_args=["--drain-seconds", str(DRAIN_SECONDS)])
        servers = [first]
        load = None
        try:
            first.start(listen=f"127.0.0.1:{port}")
            admin = AdminClient(first)
            token = new_tenant(admin, "acme")
            admin.close()
            load = Load(first.address, token)
            load.start()
            handovers = []
            for _ in range(RESTARTS):
                time.sleep(2)
                old = servers[-1]
                sent = time.time()
                old.process.send_signal(signal.SIGTERM)
                servers.append(start_on(port, kek, first))
                handovers.append(time.time() - sent)
                self.assertEqual(old.process.wait(timeout=DRAIN_SECONDS + 30), 0,
                                 old.output())
                self.assertIn('"event":"draining"', old.output())
            time.sleep(2)
            self.assertTrue(load.finish(), "clients did not stop")

            codes = {}
            for _, _, code, details in load.failures:
                codes[f"{code.name} \"{details}\""] = codes.get(f"{code.name} \"{details}\"", 0) + 1
            print(f"retrying {RETRY_CODES}: {len(load.answers)} calls answered, "
                  f"{len(load.failures)} failed {codes}")
            self.assertEqual(load.failures[:5], [], f"{len(load.failures)} calls failed")
            count = next(load.ids)  # ids handed out: one past the last
            answered = {i: len(a) for i, a in load.answers.items()}
            self.assertEqual([i for i, n in answered.items() if n != 1], [],
                             "request ids answered more than once")
            missing = [i for i in range(count) if i not in answered]
            # The last id of each client may be one it drew after `stop` and never sent.
            self.assertLessEqual(len(missing), CLIENTS)
            for i in missing:
                self.assertGreaterEqual(i, count - CLIENTS, f"request {i} never answered")

            crypto = CryptoClient(servers[-1].address, token)
            opened = 0
            for i, [(kind, plaintext, ciphertext)] in load.answers.items():
                if kind == "seal":
                    self.assertEqual(crypto.open("default", ciphertext,
                                                 f"request-{i}".encode()), plaintext)
                    opened += 1
            crypto.close()
            latencies = sorted(load.latencies)
            kinds = {}
            for [(kind, _, _)] in load.answers.values():
                kinds[kind] = kinds.get(kind, 0) + 1
            print(f"restart under load: {RESTARTS} SIGTERM + new server on port {port} "
                  f"(handover {min(handovers):.2f}-{max(handovers):.2f} s), {CLIENTS} "
                  f"clients retrying {'+'.join(RETRY_CODES)}; {len(load.answers)} calls answered "
                  f"({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}), "
                  f"0 failed, 0 answered twice; latency p50 {latencies[len(latencies) // 2] * 1e3:.1f} ms, "
                  f"p99 {latencies[int(len(latencies) * 0.99)] * 1e3:.1f} ms, max "
                  f"{latencies[-1] * 1e3:.0f} ms; {opened} Seal results reopened on the "
                  f"last server, all to their own plaintext")
        finally:
            if load:
                load.stop.set()
            for server in servers:
                kill(server)


if __name__ == "__main__":
    unittest.main(verbosity=2)
