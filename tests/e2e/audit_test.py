"""The audit log against a real server: one line per request with who, what and
how it ended, and never a payload; logrotate's rename and SIGHUP; a full disk
(/dev/full) that drops lines, counts them and holds no request up; admin-only
auditing."""
import base64
import json
import os
import signal
import subprocess
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (SERVER, AdminClient, Server, bearer, new_tenant,  # noqa: E402
                     run_operations_doc, stubs, wait_for)

FIELDS = {"time", "request_id", "service", "method", "code", "latency_us", "peer",
          "credential", "token_id", "tenant", "key", "key_version", "request_bytes",
          "response_bytes"}


def audit_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f]


def metric(server, series):
    text = urllib.request.urlopen(
        f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[1])
    raise AssertionError(f"{series} not in the metrics")


class AuditAll(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import grpc
        cls.grpc = grpc
        cls.home_log = None
        cls.server = Server(extra_args=["--audit", "all", "--audit-log", "AUDIT"])
        cls.path = os.path.join(cls.server.home, "audit.log")
        cls.server.extra_args[cls.server.extra_args.index("AUDIT")] = cls.path
        cls.server.start()
        cls.admin = AdminClient(cls.server)
        cls.token = new_tenant(cls.admin, "acme", keys=("orders", "payments"))
        cls.channel = grpc.insecure_channel(cls.server.address)
        cls.crypto = stubs()[3].CryptoStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.admin.close()
        cls.server.stop()

    def settled(self):
        """The audit file's lines once no more are coming (the writer flushes every
        0.1 s)."""
        lines = audit_lines(self.path)
        while True:
            time.sleep(0.3)
            later = audit_lines(self.path)
            if len(later) == len(lines):
                return lines
            lines = later

    def settled_lines(self, count):
        """The audit file once it holds `count` lines (and no more come)."""
        wait_for(lambda: len(audit_lines(self.path)) >= count, f"{count} audit lines")
        time.sleep(0.3)  # two flush intervals: anything extra would show now
        lines = audit_lines(self.path)
        self.assertEqual(len(lines), count, json.dumps(lines[count:], indent=1))
        return lines

    def call(self, method, request, token=None, request_id=None):
        """A unary call; (response, the server's request id from the trailers)."""
        metadata = bearer(token or self.token)
        if request_id:
            metadata.append(("x-request-id", request_id))
        response, call = getattr(self.crypto, method).with_call(
            request, metadata=metadata, timeout=30)
        return response, dict(call.trailing_metadata())["sealbox-request-id"]

    def test_one_line_per_request_with_its_fields_and_no_payload(self):
        _, _, data_pb2, _ = stubs()
        admin_pb2 = stubs()[0]
        before = len(self.settled())
        plaintext, aad = os.urandom(1000), os.urandom(40)
        secrets = [plaintext, aad, self.token.encode()]
        ids = []

        sealed, rid = self.call("Seal", data_pb2.SealRequest(
            key="orders", plaintext=plaintext, associated_data=aad), request_id="client-7")
        ids.append(rid)
        secrets.append(sealed.ciphertext)
        opened, rid = self.call("Open", data_pb2.OpenRequest(
            key="orders", ciphertext=sealed.ciphertext, associated_data=aad))
        ids.append(rid)
        self.assertEqual(opened.plaintext, plaintext)
        rewrapped, rid = self.call("Rewrap", data_pb2.RewrapRequest(
            key="orders", ciphertext=sealed.ciphertext, associated_data=aad))
        ids.append(rid)
        secrets.append(rewrapped.ciphertext)
        items = [os.urandom(64) for _ in range(3)]
        secrets += items
        batch, rid = self.call("SealBatch", data_pb2.SealBatchRequest(items=[
            data_pb2.SealRequest(key="orders", plaintext=items[0]),
            data_pb2.SealRequest(key="payments", plaintext=items[1]),
            data_pb2.SealRequest(key="missing", plaintext=items[2])]))
        ids.append(rid)
        secrets += [r.sealed.ciphertext for r in batch.results if r.HasField("sealed")]
        datakey, rid = self.call("GenerateDataKey", data_pb2.GenerateDataKeyRequest(
            key="payments", include_plaintext=True))
        ids.append(rid)
        secrets += [datakey.plaintext, datakey.ciphertext]
        # A stream, and a refused call.
        stream_plaintext = os.urandom(300_000)
        secrets.append(stream_plaintext)

        def requests():
            yield data_pb2.SealStreamRequest(start=data_pb2.StreamStart(
                key="orders", associated_data=aad))
            yield data_pb2.SealStreamRequest(plaintext_chunk=stream_plaintext)
        stream = self.crypto.SealStream(requests(), metadata=bearer(self.token), timeout=30)
        streamed = b"".join(r.ciphertext_chunk for r in stream)
        secrets.append(streamed)
        ids.append(dict(stream.trailing_metadata())["sealbox-request-id"])
        with self.assertRaises(self.grpc.RpcError) as refused:
            self.crypto.Seal(data_pb2.SealRequest(key="orders", plaintext=b"x"),
                             metadata=bearer("not-a-token"), timeout=30)
        self.assertEqual(refused.exception.code(), self.grpc.StatusCode.UNAUTHENTICATED)
        ids.append(dict(refused.exception.trailing_metadata())["sealbox-request-id"])
        # Admin calls: the tenant, key and token acted on.
        issued = self.admin.IssueToken(admin_pb2.IssueTokenRequest(tenant="acme"))
        secrets.append(issued.token.encode())
        self.admin.RevokeToken(admin_pb2.RevokeTokenRequest(
            tenant="acme", token_id=issued.info.id))
        self.admin.RotateKey(admin_pb2.KeyRef(tenant="acme", key="orders"))

        lines = self.settled_lines(before + 10)[before:]
        for line in lines:
            self.assertTrue(FIELDS <= set(line), line)
            self.assertTrue(line["peer"].startswith("ipv4:127.0.0.1:"), line)
            self.assertGreaterEqual(line["latency_us"], 0)
        self.assertEqual([line["request_id"] for line in lines[:7]], ids)
        self.assertEqual(len({line["request_id"] for line in lines}), 10)
        seal, open_, rewrap, sbatch, dkey, sstream, bad, issue, revoke, rotate = lines
        token_id = seal["token_id"]
        self.assertTrue(token_id)
        for line in (seal, open_, rewrap, sbatch, dkey, sstream):
            self.assertEqual((line["service"], line["code"], line["credential"],
                              line["token_id"], line["tenant"]),
                             ("sealbox.v1.Crypto", "OK", "token", token_id, "acme"), line)
        self.assertEqual((seal["method"], seal["key"], seal["key_version"]), ("Seal", "orders", 1))
        self.assertEqual(seal["client_request_id"], "client-7")
        self.assertGreater(seal["request_bytes"], 1040)
        self.assertGreater(seal["response_bytes"], 1028)
        self.assertEqual((open_["method"], open_["key"], open_["key_version"]),
                         ("Open", "orders", 1))
        self.assertEqual((rewrap["method"], rewrap["key"]), ("Rewrap", "orders"))
        self.assertEqual((sbatch["method"], sbatch["items"], sbatch["failed_items"],
                          sbatch["keys"]), ("SealBatch", 3, 1, ["orders", "payments", "missing"]))
        self.assertEqual((dkey["method"], dkey["key"]), ("GenerateDataKey", "payments"))
        self.assertEqual((sstream["method"], sstream["key"], sstream["key_version"]),
                         ("SealStream", "orders", 1))
        self.assertGreater(sstream["request_bytes"], 300_000)
        self.assertGreater(sstream["response_bytes"], 300_000)
        # Who was refused, and what they asked for.
        self.assertEqual((bad["method"], bad["code"], bad["credential"], bad["tenant"],
                          bad["token_id"], bad["key"]),
                         ("Seal", "UNAUTHENTICATED", "", "", "", "orders"))
        for line, method in ((issue, "IssueToken"), (revoke, "RevokeToken"),
                             (rotate, "RotateKey")):
            self.assertEqual((line["service"], line["method"], line["code"],
                              line["credential"], line["token_id"], line["tenant"]),
                             ("sealbox.v1.Admin", method, "OK", "admin_token", "bootstrap",
                              "acme"), line)
        self.assertEqual(revoke["target_token_id"], issued.info.id)
        self.assertEqual(rotate["key"], "orders")
        # No payload, associated data, ciphertext or token, in any encoding.
        with open(self.path, "rb") as f:
            text = f.read()
        for secret in secrets:
            for form in (secret, secret.hex().encode(), base64.b64encode(secret),
                         base64.urlsafe_b64encode(secret)):
                for start in (0, len(form) // 2, max(0, len(form) - 32)):
                    self.assertNotIn(form[start:start + 32], text)

    def test_a_refusal_names_who_was_refused_and_what_they_asked_for(self):
        admin_pb2, _, data_pb2, _ = stubs()
        issued = self.admin.IssueToken(admin_pb2.IssueTokenRequest(
            tenant="acme", operations=[admin_pb2.SEAL], keys=["orders"]))
        before = len(self.settled())

        def requests():
            yield data_pb2.OpenStreamRequest(start=data_pb2.StreamStart(key="orders"))
        for method, call in (
                ("Open", lambda: self.crypto.Open(
                    data_pb2.OpenRequest(key="orders", ciphertext=b"x" * 40),
                    metadata=bearer(issued.token), timeout=30)),
                ("OpenStream", lambda: list(self.crypto.OpenStream(
                    requests(), metadata=bearer(issued.token), timeout=30))),
                ("Seal", lambda: self.crypto.Seal(
                    data_pb2.SealRequest(key="payments", plaintext=b"x"),
                    metadata=bearer(issued.token), timeout=30))):
            with self.assertRaises(self.grpc.RpcError, msg=method) as refused:
                call()
            self.assertEqual(refused.exception.code(), self.grpc.StatusCode.PERMISSION_DENIED)
        lines = self.settled()[before:]
        self.assertEqual(
            [(line["method"], line["code"], line["credential"], line["token_id"],
              line["tenant"], line["key"]) for line in lines],
            [("Open", "PERMISSION_DENIED", "token", issued.info.id, "acme", "orders"),
             ("OpenStream", "PERMISSION_DENIED", "token", issued.info.id, "acme", "orders"),
             ("Seal", "PERMISSION_DENIED", "token", issued.info.id, "acme", "payments")])

    def test_the_cli_quotes_the_request_id_of_a_failed_call(self):
        sealed = bytearray(self.server.cli("seal", "--key", "orders", token=self.token,
                                           input=b"quote me").stdout)
        sealed[-1] ^= 1
        before = len(self.settled())
        failed = self.server.cli("open", "--key", "orders", token=self.token,
                                 input=bytes(sealed), check=False)
        self.assertNotEqual(failed.returncode, 0)
        stderr = failed.stderr.decode()
        self.assertIn("decryption failed (request id ", stderr)
        request_id = stderr.split("(request id ")[1].split(")")[0]
        [line] = self.settled()[before:]
        self.assertEqual((line["request_id"], line["method"], line["code"],
                          line["response_bytes"]),
                         (request_id, "Open", "INVALID_ARGUMENT", 0))

    def test_the_operations_doc_example(self):
        """docs/OPERATIONS.md's audit block, run as written: four lines, and the doc's
        sample line has the fields a real one has."""
        before = len(self.settled())
        run_operations_doc("### The audit log", self.server)
        lines = self.settled()[before:]
        self.assertEqual([(line["method"], line["tenant"], line["key"], line["code"])
                          for line in lines],
                         [("CreateTenant", "audit-demo", "", "OK"),
                          ("CreateKey", "audit-demo", "orders", "OK"),
                          ("IssueToken", "audit-demo", "", "OK"),
                          ("Seal", "audit-demo", "orders", "OK")])
        self.assertEqual(lines[3]["credential"], "token")
        with open(self.path, "rb") as f:
            self.assertNotIn(b"order 7", f.read())
        with open("docs/OPERATIONS.md") as f:
            section = f.read().split("### The audit log", 1)[1]
        sample = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])
        self.assertEqual(set(sample), set(lines[3]) | {"client_request_id"})

    def test_sighup_reopens_the_file_logrotate_moved(self):
        _, _, data_pb2, _ = stubs()
        self.call("Seal", data_pb2.SealRequest(key="orders", plaintext=b"before"))
        count = len(self.settled())
        rotated = self.path + ".1"
        os.rename(self.path, rotated)
        self.server.process.send_signal(signal.SIGHUP)
        wait_for(lambda: os.path.exists(self.path), "the audit log reopened")
        _, rid = self.call("Seal", data_pb2.SealRequest(key="orders", plaintext=b"after"))
        lines = self.settled_lines(1)
        self.assertEqual(lines[0]["request_id"], rid)
        self.assertEqual(len(audit_lines(rotated)), count)
        self.assertEqual(oct(os.stat(self.path).st_mode & 0o777), "0o600")
        self.assertIn('"event":"audit_log_reopened"', self.server.output())
        self.assertIsNone(self.server.process.poll(), "SIGHUP must not stop the server")


class AuditEdges(unittest.TestCase):
    def test_a_full_disk_drops_lines_counts_them_and_holds_nothing_up(self):
        server = Server(extra_args=["--audit", "all", "--audit-log", "/dev/full"]).start()
        try:
            admin = AdminClient(server)
            token = new_tenant(admin, "acme")
            admin.close()
            for i in range(20):
                sealed = server.cli("seal", "--key", "default", token=token, input=b"full %d" % i).stdout
                self.assertEqual(server.cli("open", "--key", "default", token=token, input=sealed).stdout,
                                 b"full %d" % i)
            # 3 admin calls and 40 data-plane calls, none of them written.
            wait_for(lambda: metric(
                server, 'sealbox_audit_lines_dropped_total{reason="write_failed"}') >= 43,
                "43 dropped lines counted")
            self.assertEqual(metric(server, "sealbox_audit_lines_written_total"), 0)
            self.assertEqual(server.output().count('"event":"audit_write_failed"'), 1)
        finally:
            server.stop()

    def test_admin_only_audits_admin_calls(self):
        server = Server(extra_args=["--audit", "admin", "--audit-log", "AUDIT"])
        path = os.path.join(server.home, "audit.log")
        server.extra_args[server.extra_args.index("AUDIT")] = path
        server.start()
        try:
            admin = AdminClient(server)
            token = new_tenant(admin, "acme")  # CreateTenant, CreateKey, IssueToken
            admin.close()
            server.cli("seal", "--key", "default", token=token, input=b"not audited")
            server.admin("tenant", "list")
            wait_for(lambda: len(audit_lines(path)) >= 4, "4 admin lines")
            time.sleep(0.3)
            self.assertEqual([line["method"] for line in audit_lines(path)],
                             ["CreateTenant", "CreateKey", "IssueToken", "ListTenants"])
        finally:
            server.stop()

    def test_an_audit_log_without_a_level_is_refused(self):
        result = subprocess.run(SERVER + ["--audit-log", "/tmp/x.log", "--dev"],
                                capture_output=True, timeout=60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(b"also say which: --audit=all or --audit=admin", result.stderr)
        result = subprocess.run(SERVER + ["--audit", "some", "--dev"],
                                capture_output=True, timeout=60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(b'--audit is off, admin or all, not "some"', result.stderr)


if __name__ == "__main__":
    unittest.main()
