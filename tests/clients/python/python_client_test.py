"""End-to-end: the Python client library (client/python, package `sealbox`) against the
real server: every call, errors by type (a failed decryption from the status details),
streams and files in bounded memory, retries across a server restart, token renewal,
the checked-in stubs, a pip install, and the code of docs/clients/PYTHON.md.

Envelope files and checksums have their own file, envelope_test.py."""
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.abspath("tests/e2e"))
sys.path.insert(0, os.path.abspath("client/python"))
import sealbox  # noqa: E402
from harness import (Pki, Server, file_sha256, free_port, read_bytes,  # noqa: E402
                     write_random)
from sealbox import BatchItem, RetryPolicy  # noqa: E402

MIB = 1 << 20
PACKAGE = os.path.abspath("client/python")
GUIDE = "docs/clients/PYTHON.md"
# Patient enough for a server restart (about a second here), as docs/clients/PYTHON.md
# shows for rolling restarts.
PATIENT = RetryPolicy(max_attempts=40, initial_backoff=0.05, max_backoff=1.0)


def tmpdir():
    return tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


def flip(data, offset):
    changed = bytearray(data)
    changed[offset] ^= 0x01
    return bytes(changed)


class WithServer(unittest.TestCase):
    """One server for the module, a tenant `acme` with keys default and other."""


def setUpModule():
    WithServer.server = Server().start()
    WithServer.token = WithServer.server.new_tenant("acme")
    WithServer.server.admin("key", "create", "acme", "other")
    WithServer.client = sealbox.Client(WithServer.server.address, WithServer.token)


def tearDownModule():
    WithServer.client.close()
    WithServer.server.stop()


class Calls(WithServer):
    def test_seal_open_rewrap(self):
        sealed = self.client.seal("default", b"card 4111", b"user:42")
        self.assertEqual((sealed.ciphertext[0], sealed.key_version), (0x01, 1))
        opened = self.client.open("default", sealed.ciphertext, b"user:42")
        self.assertEqual((opened.plaintext, opened.key_version), (b"card 4111", 1))
        rewrapped = self.client.rewrap("default", sealed.ciphertext, b"user:42")
        self.assertEqual((rewrapped.key_version, rewrapped.previous_key_version), (1, 1))
        self.assertEqual(self.client.open("default", rewrapped.ciphertext, b"user:42").plaintext,
                         b"card 4111")
        self.assertEqual(self.client.seal("default", b"").key_version, 1)  # empty is fine

    def test_batches_fail_item_by_item(self):
        sealed = self.client.seal_batch([BatchItem("default", b"one", b"a"),
                                         BatchItem("nope", b"two"),
                                         BatchItem("other", b"three")])
        self.assertEqual([r.ok for r in sealed], [True, False, True])
        self.assertIsInstance(sealed[1].error, sealbox.NotFoundError)
        tampered = flip(sealed[2].value.ciphertext, 30)
        opened = self.client.open_batch([BatchItem("default", sealed[0].value.ciphertext, b"a"),
                                         BatchItem("other", tampered),
                                         BatchItem("default", sealed[0].value.ciphertext, b"b")])
        self.assertEqual(opened[0].value.plaintext, b"one")
        # A failed decryption in a batch is told by its reason, as in a unary call.
        self.assertIsInstance(opened[1].error, sealbox.DecryptionFailedError)
        self.assertIsInstance(opened[2].error, sealbox.DecryptionFailedError)
        rewrapped = self.client.rewrap_batch([BatchItem("other", sealed[2].value.ciphertext)])
        self.assertEqual(self.client.open("other", rewrapped[0].value.ciphertext).plaintext,
                         b"three")

    def test_generate_data_key(self):
        key = self.client.generate_data_key("default", associated_data=b"disk-7")
        self.assertEqual((len(key.plaintext), key.key_version), (32, 1))
        self.assertEqual(self.client.open("default", key.ciphertext, b"disk-7").plaintext,
                         key.plaintext)
        sealed_only = self.client.generate_data_key("default", include_plaintext=False,
                                                    data_key_bytes=16)
        self.assertEqual(sealed_only.plaintext, b"")
        self.assertEqual(len(self.client.open("default", sealed_only.ciphertext).plaintext), 16)

    def test_streams_from_bytes_and_from_an_iterable(self):
        data = os.urandom(3 * MIB + 5)
        answer = self.client.seal_stream("default", data, b"video-1", segment_size=65536)
        ciphertext = b"".join(answer)
        self.assertEqual((ciphertext[0], answer.key_version), (0x02, 1))
        pieces = (ciphertext[i:i + 100_000] for i in range(0, len(ciphertext), 100_000))
        opened = self.client.open_stream("default", pieces, b"video-1")
        self.assertEqual(b"".join(opened), data)
        self.assertEqual(opened.key_version, 1)
        with self.assertRaises(sealbox.DecryptionFailedError):
            b"".join(self.client.open_stream("default", flip(ciphertext, 70_000), b"video-1"))
        with self.assertRaises(sealbox.DecryptionFailedError):
            b"".join(self.client.open_stream("default", ciphertext[:-1], b"video-1"))

    def test_errors_by_type(self):
        sealed = self.client.seal("default", b"x", b"ctx").ciphertext
        cases = [
            (lambda: self.client.open("default", flip(sealed, 40), b"ctx"),
             sealbox.DecryptionFailedError, "decryption failed"),
            (lambda: self.client.open("default", sealed, b"other ctx"),
             sealbox.DecryptionFailedError, "decryption failed"),
            (lambda: self.client.rewrap("other", sealed, b"ctx"),
             sealbox.DecryptionFailedError, "decryption failed"),
            (lambda: self.client.seal("nope", b"x"), sealbox.NotFoundError, 'key "nope"'),
            (lambda: self.client.seal("bad name!", b"x"), sealbox.InvalidArgumentError, "key"),
            (lambda: sealbox.Client(self.server.address, "wrong").seal("default", b"x"),
             sealbox.UnauthenticatedError, ""),
            # A deadline already past is refused before the call is sent.
            (lambda: self.client.seal("default", b"x", timeout=0),
             sealbox.DeadlineExceededError, "deadline"),
            # gRPC's own deadline, on a call that cannot finish within it: 1 MiB
            # cannot even be sent in 100 us. (With a one-byte Seal, a local server
            # sometimes answered a 1 us deadline before gRPC acted on its timer.)
            (lambda: self.client.seal("default", os.urandom(MIB), timeout=1e-4),
             sealbox.DeadlineExceededError, ""),
        ]
        for call, kind, text in cases:
            with self.subTest(kind.__name__, text=text):
                with self.assertRaises(kind) as raised:
                    call()
                self.assertIsInstance(raised.exception, sealbox.SealboxError)
                self.assertIn(text, raised.exception.message)
                # Only a failed decryption is one: an INVALID_ARGUMENT such as a bad
                # key name is not mistaken for it.
                self.assertEqual(isinstance(raised.exception, sealbox.DecryptionFailedError),
                                 kind is sealbox.DecryptionFailedError)

    def test_the_reason_comes_from_the_status_details_not_the_text(self):
        from sealbox.errors import _sealbox_reason, error_for
        import grpc
        # A google.rpc.Status {code: 3, message: "x", details: [Any{ErrorInfo{reason,
        # domain}}]}, encoded by hand as docs/FORMAT.md's readers would.
        info = b"\x0a\x11DECRYPTION_FAILED\x12\x0asealbox.v1"
        type_url = b"type.googleapis.com/google.rpc.ErrorInfo"
        any_message = b"\x0a" + bytes([len(type_url)]) + type_url + b"\x12" + bytes([len(info)]) + info
        status = b"\x08\x03\x12\x01x\x1a" + bytes([len(any_message)]) + any_message
        self.assertEqual(_sealbox_reason(status), "DECRYPTION_FAILED")
        self.assertEqual(_sealbox_reason(status.replace(b"sealbox.v1", b"another.v1")), "")
        self.assertEqual(_sealbox_reason(b"\xff\xff"), "")  # damaged: no reason
        self.assertIsInstance(error_for(grpc.StatusCode.INVALID_ARGUMENT, "decryption failed"),
                              sealbox.InvalidArgumentError)  # the text alone decides nothing

    def test_scoped_token(self):
        scoped = self.server.admin("token", "issue", "acme", "--operations", "seal",
                                   "--keys", "default").stdout.decode().strip()
        with sealbox.Client(self.server.address, scoped) as client:
            sealed = client.seal("default", b"x")
            with self.assertRaisesRegex(sealbox.PermissionDeniedError, "open permission"):
                client.open("default", sealed.ciphertext)
            with self.assertRaises(sealbox.PermissionDeniedError):
                client.seal("other", b"x")

    def test_renew_token(self):
        token = self.server.admin("token", "issue", "acme", "--ttl", "1h").stdout.decode().strip()
        with sealbox.Client(self.server.address, token) as client:
            renewed = client.renew_token(ttl=datetime.timedelta(minutes=30))
            self.assertNotEqual(renewed.token, token)
            self.assertEqual(client.token, renewed.token)
            left = renewed.expire_time - datetime.datetime.now(datetime.timezone.utc)
            self.assertTrue(datetime.timedelta(minutes=29) < left <= datetime.timedelta(minutes=30))
            client.seal("default", b"with the successor")
        # A token without an expiry cannot be renewed.
        with self.assertRaises(sealbox.FailedPreconditionError):
            self.client.renew_token()


class Files(WithServer):
    def test_100_mib_through_the_streams_in_bounded_memory(self):
        """seal_file and open_file of 100 MiB in a child process, its peak RSS measured."""
        folder = tmpdir()
        plain = os.path.join(folder, "plain")
        write_random(plain, 100 * MIB)
        child = f"""
import json, resource, sys, time
sys.path.insert(0, {PACKAGE!r})
import sealbox
calls = []
with sealbox.Client({self.server.address!r}, {self.token!r}) as client:
    client.seal("default", b"warm")
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.monotonic()
    client.seal_file("default", {plain!r}, {plain!r} + ".sealed", b"f",
                     progress=lambda done, total: calls.append((done, total)))
    sealed = time.monotonic()
    client.open_file("default", {plain!r} + ".sealed", {plain!r} + ".opened", b"f")
    opened = time.monotonic()
print(json.dumps({{"rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "baseline_mib": baseline,
                  "progress": calls, "seal_s": sealed - start, "open_s": opened - sealed}}))
"""
        result = subprocess.run(["/usr/bin/python3", "-c", child], capture_output=True,
                                timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        figures = json.loads(result.stdout)
        self.assertEqual(file_sha256(plain + ".opened"), file_sha256(plain))
        progress = figures["progress"]
        self.assertEqual(progress[0], [0, 100 * MIB])
        self.assertEqual(progress[-1], [100 * MIB, 100 * MIB])
        self.assertEqual([p[0] for p in progress], sorted(p[0] for p in progress))
        growth = figures["rss_mib"] - figures["baseline_mib"]
        print(f"python: 100 MiB sealed in {figures['seal_s']:.1f} s, opened in "
              f"{figures['open_s']:.1f} s, peak RSS {figures['rss_mib']:.0f} MiB, "
              f"{growth:.0f} MiB above the process after its first call")
        # The interpreter, gRPC and the library take about 40 MiB before any data. A few
        # 1 MiB chunks and gRPC's flow-control windows come on top; holding the file
        # whole would add 100 MiB.
        self.assertLess(growth, 48)
        self.assertEqual(sorted(os.listdir(folder)), ["plain", "plain.opened", "plain.sealed"])

    def test_a_damaged_file_leaves_nothing(self):
        folder = tmpdir()
        plain, sealed = os.path.join(folder, "plain"), os.path.join(folder, "plain.sealed")
        write_random(plain, 2 * MIB)
        self.client.seal_file("default", plain, sealed)
        with open(sealed, "r+b") as f:
            f.seek(MIB + 10)
            byte = f.read(1)
            f.seek(MIB + 10)
            f.write(bytes([byte[0] ^ 1]))
        out = os.path.join(folder, "out")
        with self.assertRaises(sealbox.DecryptionFailedError):
            self.client.open_file("default", sealed, out)
        self.assertEqual(sorted(os.listdir(folder)), ["plain", "plain.sealed"])
        with self.assertRaises(FileNotFoundError):
            self.client.seal_file("default", os.path.join(folder, "missing"), out)


class Retries(unittest.TestCase):
    def test_calls_made_while_the_server_restarts_succeed(self):
        port = free_port()
        server = Server().start(listen=f"127.0.0.1:{port}")
        token = server.new_tenant("acme")
        folder = tmpdir()
        plain = os.path.join(folder, "plain")
        write_random(plain, 3 * MIB)
        try:
            with sealbox.Client(server.address, token, retry=PATIENT) as client, \
                    sealbox.Client(server.address, token, retry=sealbox.NO_RETRY) as once:
                sealed = client.seal("default", b"before").ciphertext
                server.stop()
                with self.assertRaises(sealbox.UnavailableError):
                    once.seal("default", b"no retries")
                restart = threading.Timer(1.0, lambda: server.start(listen=f"127.0.0.1:{port}"))
                restart.start()
                try:
                    started = time.monotonic()
                    # Made while nothing listens: retried until the server is back.
                    self.assertEqual(client.open("default", sealed).plaintext, b"before")
                    waited = time.monotonic() - started
                finally:
                    restart.join()
                print(f"python: an Open made during a restart succeeded after {waited:.2f} s")
                self.assertGreater(waited, 0.5)
                # A file's stream is retried too: its input can be read again.
                server.stop()
                restart = threading.Timer(1.0, lambda: server.start(listen=f"127.0.0.1:{port}"))
                restart.start()
                try:
                    client.seal_file("default", plain, plain + ".sealed")
                finally:
                    restart.join()
                client.open_file("default", plain + ".sealed", plain + ".opened")
                self.assertEqual(read_bytes(plain + ".opened"), read_bytes(plain))
        finally:
            server.stop()

    def test_a_failed_decryption_is_never_retried(self):
        server = Server(extra_args=["--max-decryption-failures-per-key", "3"]).start()
        token = server.new_tenant("acme")
        try:
            with sealbox.Client(server.address, token, retry=PATIENT) as client:
                sealed = client.seal("default", b"x").ciphertext
                for _ in range(3):
                    with self.assertRaises(sealbox.DecryptionFailedError):
                        client.open("default", flip(sealed, 40))
                # Three failures, three calls: a retry would have used up the limit sooner.
                with self.assertRaises(sealbox.ResourceExhaustedError):
                    client.open("default", flip(sealed, 40))
        finally:
            server.stop()


class Renewal(WithServer):
    def test_an_expiring_token_is_renewed_before_it_expires(self):
        # The expiry the program is told is no later than the real one: counted from
        # before the issuing call (on a busy machine the CLI may return a second later).
        issued_before = time.time()
        issued = self.server.admin("token", "issue", "acme", "--ttl", "5s", "--max-ttl", "1h")
        token = issued.stdout.decode().strip()
        expires = issued_before + 5
        renewals = []
        with sealbox.Client(self.server.address, token, renew_token=True,
                            token_expires_at=expires, on_token_renewed=renewals.append) as client:
            end = time.monotonic() + 10
            calls = 0
            while time.monotonic() < end:  # twice the token's life, a call every 0.25 s
                client.seal("default", b"still working")
                calls += 1
                time.sleep(0.25)
            self.assertGreaterEqual(len(renewals), 2, renewals)
            self.assertEqual(client.token, renewals[-1].token)
        print(f"python: {calls} calls over 10 s with a 5 s token, renewed {len(renewals)} times")
        with sealbox.Client(self.server.address, token) as stale:
            with self.assertRaisesRegex(sealbox.UnauthenticatedError, "expired"):
                stale.seal("default", b"x")

    def test_unknown_expiry_renews_at_the_first_call(self):
        token = self.server.admin("token", "issue", "acme", "--ttl", "1h").stdout.decode().strip()
        renewals = []
        with sealbox.Client(self.server.address, token, renew_token=True,
                            on_token_renewed=renewals.append) as client:
            client.seal("default", b"x")
            client.seal("default", b"y")
        self.assertEqual(len(renewals), 1)


class Tls(unittest.TestCase):
    """TLS to a server with a certificate, and mutual TLS with no token at all."""

    @classmethod
    def setUpClass(cls):
        cls.pki = Pki()
        cls.ca, ca_key = cls.pki.make_ca("ca", "sealbox test CA")
        cls.pki.issue("server", "/CN=sealbox.internal", "subjectAltName=DNS:sealbox.internal",
                      cls.ca, ca_key)
        cls.pki.issue("client", "/CN=acme-service", "extendedKeyUsage=clientAuth", cls.ca,
                      ca_key)
        cls.server = Server(extra_args=[
            "--tls-cert", cls.pki.path("server.pem"), "--tls-key", cls.pki.path("server.key"),
            "--client-ca", cls.ca, "--cert-tenant", "acme-service=acme"]).start()
        cls.addClassCleanup(cls.server.stop)  # also when the rest of setUpClass fails
        mtls = ["--tls-ca", cls.ca, "--tls-server-name", "sealbox.internal",
                "--tls-cert", cls.pki.path("client.pem"), "--tls-key", cls.pki.path("client.key")]
        cls.server.cli(*mtls, "admin", "tenant", "create", "acme", token=cls.server.admin_token)
        cls.server.cli(*mtls, "admin", "key", "create", "acme", "default",
                       token=cls.server.admin_token)

    def test_mutual_tls_with_the_certificate_as_the_credential(self):
        with sealbox.Client(self.server.address, ca_file=self.ca, server_name="sealbox.internal",
                            cert_file=self.pki.path("client.pem"),
                            key_file=self.pki.path("client.key")) as client:
            sealed = client.seal("default", b"over mTLS")
            self.assertEqual(client.open("default", sealed.ciphertext).plaintext, b"over mTLS")
            with self.assertRaises(sealbox.FailedPreconditionError):
                client.renew_token()  # a certificate is not a token

    def test_plaintext_or_an_unknown_ca_fails_as_unavailable(self):
        # 127.0.0.1 is loopback, so plaintext unless TLS is asked for: the TLS server
        # drops it. Another CA: the server's certificate does not verify.
        other_ca, _ = self.pki.make_ca("other", "another CA")
        for options in ({}, {"ca_file": other_ca, "server_name": "sealbox.internal",
                             "cert_file": self.pki.path("client.pem"),
                             "key_file": self.pki.path("client.key")}):
            with self.subTest(options=sorted(options)):
                with sealbox.Client(self.server.address, timeout=5, retry=sealbox.NO_RETRY,
                                    **options) as client:
                    with self.assertRaises(sealbox.UnavailableError):
                        client.seal("default", b"x")


class Package(unittest.TestCase):
    def test_the_checked_in_stubs_are_current(self):
        out = tmpdir()
        subprocess.run(["bash", "client/python/generate.sh", out], check=True)
        for name in ("data_pb2.py", "data_pb2_grpc.py"):
            with self.subTest(name):
                self.assertEqual(read_bytes(os.path.join(out, "sealbox/v1", name)),
                                 read_bytes(os.path.join(PACKAGE, "sealbox/v1", name)),
                                 "run client/python/generate.sh")

    def test_pip_installs_it_offline_and_the_guide_works(self):
        """The guide's install commands, then its first program, from another folder."""
        with open(GUIDE) as f:
            guide = f.read()
        install = re.search(r"<!-- install -->\n```sh\n(.*?)```", guide, re.S).group(1)
        first = re.search(r"<!-- first-program -->\n```python\n(.*?)```", guide, re.S).group(1)
        work = tmpdir()
        # The guide runs from a checkout's root: give it one with just the package.
        shutil.copytree(PACKAGE, os.path.join(work, "client/python"),
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        server = Server().start()
        try:
            token = server.new_tenant("acme")
            with open(os.path.join(work, "report.pdf"), "wb") as f:
                f.write(os.urandom(300_000))
            # Debian's python3 first, as on the machines the guide is for.
            env = dict(os.environ, SEALBOX_SERVER=server.address, SEALBOX_TOKEN=token,
                       PIP_NO_INDEX="1", PYTHONPATH="",
                       PATH="/usr/bin:/bin:" + os.environ.get("PATH", ""))
            result = subprocess.run(["bash", "-euo", "pipefail", "-c", install], cwd=work,
                                    env=env, capture_output=True, timeout=300)
            self.assertEqual(result.returncode, 0, result.stderr.decode())
            with open(os.path.join(work, "first.py"), "w") as f:
                f.write(first)
            result = subprocess.run([os.path.join(work, ".venv/bin/python"), "first.py"],
                                    cwd=work, env=env, capture_output=True, timeout=120)
            self.assertEqual(result.returncode, 0, result.stderr.decode())
            self.assertIn(b"opened: card 4111", result.stdout)
            self.assertEqual(read_bytes(os.path.join(work, "report.pdf.opened")),
                             read_bytes(os.path.join(work, "report.pdf")))
            # It was the installed copy that ran, not the checkout's.
            where = subprocess.run([os.path.join(work, ".venv/bin/python"), "-c",
                                    "import sealbox; print(sealbox.__file__)"], cwd="/",
                                   env=env, capture_output=True, check=True)
            self.assertIn(b"/.venv/lib/", where.stdout)
        finally:
            server.stop()


if __name__ == "__main__":
    unittest.main()
