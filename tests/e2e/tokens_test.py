"""Scoped and expiring tenant tokens against real servers: two sealbox-server
processes sharing one keystore (a data directory, or etcd under the etcd tier), the
CLI as a user runs it, and raw gRPC for the stream and batch calls."""
import datetime
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Server, bearer, run_operations_doc, start_replicas, stubs,  # noqa: E402
                     wait_for)

EXIT_AUTH = 4  # the CLI's exit code for UNAUTHENTICATED and PERMISSION_DENIED


class Tokens(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = start_replicas(2)
        cls.full = cls.a.new_tenant("acme", key="orders-1")
        for key in ("orders-2", "payments"):
            cls.a.admin("key", "create", "acme", key)

    @classmethod
    def tearDownClass(cls):
        for server in (cls.a, cls.b):
            server.stop()

    def issue(self, *flags):
        """A token for acme from `admin token issue acme FLAGS`; (token, id)."""
        issued = self.a.admin("token", "issue", "acme", *flags)
        token_id = issued.stderr.decode().split("issued token ")[1].split()[0]
        return issued.stdout.decode().strip(), token_id

    def refused(self, server, token, *args, input=b"x"):
        """The stderr of a CLI call that must be refused for its credentials."""
        result = server.cli(*args, token=token, input=input, check=False)
        self.assertEqual(result.returncode, EXIT_AUTH, result.stderr)
        stderr = result.stderr.decode()
        self.assertNotIn(token, stderr, "a refusal must not echo the token")
        return stderr

    def test_a_token_scoped_to_seal_on_orders(self):
        token, token_id = self.issue("--operations", "seal", "--keys", "orders-*",
                                     "--description", "orders service")
        # It seals under orders-1 and orders-2, through either replica.
        for server in (self.a, self.b):
            for key in ("orders-1", "orders-2"):
                sealed = server.cli("seal", "--key", key, token=token, input=b"order 7").stdout
                opened = server.cli("open", "--key", key, token=self.full, input=sealed)
                self.assertEqual(opened.stdout, b"order 7")
        sealed = self.a.cli("seal", "--key", "orders-1", token=token, input=b"x").stdout
        # Everything else is PERMISSION_DENIED naming what is missing.
        stderr = self.refused(self.a, token, "open", "--key", "orders-1", input=sealed)
        self.assertIn("PERMISSION_DENIED", stderr)
        self.assertIn("this token lacks the open permission (it has: seal)", stderr)
        stderr = self.refused(self.b, token, "seal", "--key", "payments")
        self.assertIn('this token lacks permission for key "payments" (its keys: orders-*)', stderr)
        self.assertIn("lacks the rewrap permission",
                      self.refused(self.a, token, "rewrap", "--key", "orders-1", input=sealed))
        self.assertIn("lacks the datakey permission",
                      self.refused(self.a, token, "datakey", "--key", "orders-1", input=None))
        # The stream calls are the same operations.
        big = os.urandom(3 << 20)
        streamed = self.a.cli("seal", "--stream", "--key", "orders-2", token=token,
                              input=big).stdout
        self.assertEqual(streamed[0], 0x02)
        self.assertIn("lacks the open permission",
                      self.refused(self.a, token, "open", "--key", "orders-2", input=streamed))
        self.assertIn('permission for key "payments"',
                      self.refused(self.a, token, "seal", "--stream", "--key", "payments"))
        # A batch answers per item: the item it may do is done, the other refused.
        import grpc
        _, _, data_pb2, data_grpc = stubs()
        with grpc.insecure_channel(self.a.address) as channel:
            crypto = data_grpc.CryptoStub(channel)
            results = crypto.SealBatch(
                data_pb2.SealBatchRequest(items=[
                    data_pb2.SealRequest(key="orders-1", plaintext=b"fine"),
                    data_pb2.SealRequest(key="payments", plaintext=b"not this")]),
                metadata=bearer(token), timeout=30).results
            self.assertTrue(results[0].HasField("sealed"))
            self.assertEqual(results[1].error.code, grpc.StatusCode.PERMISSION_DENIED.value[0])
            self.assertIn('permission for key "payments"', results[1].error.message)
        # The listing shows the scope; the full token is as it always was.
        listed = self.a.admin("tenant", "list").stdout.decode()
        self.assertIn(f"{token_id}  ", listed)
        self.assertIn("may seal on orders-*", listed)
        for key in ("orders-1", "payments"):
            self.a.cli("open", "--key", key, token=self.full,
                       input=self.a.cli("seal", "--key", key, token=self.full,
                                        input=b"all").stdout)

    def test_bad_scopes_are_refused_before_anything_is_stored(self):
        bad = self.a.admin("token", "issue", "acme", "--keys", "orders*x", check=False)
        self.assertEqual(bad.returncode, 1, bad.stderr)
        self.assertIn("INVALID_ARGUMENT", bad.stderr.decode())
        bad = self.a.admin("token", "issue", "acme", "--operations", "encrypt", check=False)
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("unknown operation", bad.stderr.decode())
        bad = self.a.admin("token", "issue", "acme", "--max-ttl", "1h", check=False)
        self.assertIn("needs a ttl", bad.stderr.decode())

    def test_an_expired_token_is_refused_on_every_replica(self):
        # Long enough for both replicas to use it first on a loaded machine.
        token, token_id = self.issue("--ttl", "8s", "--description", "short-lived")
        for server in (self.a, self.b):
            server.cli("seal", "--key", "orders-1", token=token, input=b"x")
        listed = json.loads(self.b.admin("--json", "tenant", "list").stdout)
        info = next(t for t in listed["tenants"][0]["tokens"] if t["id"] == token_id)
        # Proto JSON: an RFC 3339 time, whole seconds.
        expires = datetime.datetime.fromisoformat(
            info["expire_time"].replace("Z", "+00:00")).timestamp()
        self.assertLess(expires - time.time(), 9)
        time.sleep(max(0.0, expires - time.time()) + 1)
        for server in (self.a, self.b):
            stderr = self.refused(server, token, "seal", "--key", "orders-1")
            self.assertIn("UNAUTHENTICATED", stderr)
            self.assertIn("token expired", stderr)
            metrics = server.cli("health", check=False)  # the server is still healthy
            self.assertEqual(metrics.returncode, 0, metrics.stderr)
        # Still listed (so it can be seen and revoked), and marked with its expiry.
        self.assertIn("expires", self.a.admin("tenant", "list").stdout.decode())
        self.a.admin("token", "revoke", "acme", token_id)

    def test_renewal_issues_a_successor_with_the_same_scope(self):
        token, token_id = self.issue("--operations", "seal,open", "--keys", "orders-1",
                                     "--ttl", "1h", "--max-ttl", "2h")
        renewed = self.a.cli("token", "renew", token=token)
        successor = renewed.stdout.decode().strip()
        self.assertTrue(successor.startswith("sbx_") and successor != token)
        self.assertIn("renewed as token", renewed.stderr.decode())
        self.assertNotIn(successor, renewed.stderr.decode())
        # The successor works on the other replica at once, with the same scope.
        sealed = self.b.cli("seal", "--key", "orders-1", token=successor, input=b"r").stdout
        self.assertEqual(self.b.cli("open", "--key", "orders-1", token=successor,
                                    input=sealed).stdout, b"r")
        self.assertIn('permission for key "orders-2"',
                      self.refused(self.b, successor, "seal", "--key", "orders-2"))
        # And the old token works until its own expiry.
        self.a.cli("seal", "--key", "orders-1", token=token, input=b"still")
        listed = self.a.admin("tenant", "list").stdout.decode()
        self.assertIn(f"renewed from {token_id}", listed)
        # A renewal asking for more than the maximum ends at the maximum; then no more.
        last = self.a.cli("token", "renew", "--ttl", "30d", token=successor)
        final = last.stdout.decode().strip()
        again = self.a.cli("token", "renew", token=final, check=False)
        self.assertNotEqual(again.returncode, 0)
        self.assertIn("max_expire_time", again.stderr.decode())
        # A token that never expires has nothing to renew.
        never = self.a.cli("token", "renew", token=self.full, check=False)
        self.assertIn("does not expire", never.stderr.decode())
        # Renewal needs a valid token, like any call.
        self.assertIn("UNAUTHENTICATED",
                      self.refused(self.a, "sbx_not-a-token", "token", "renew", input=None))

    def test_operations_doc_token_commands(self):
        result = run_operations_doc("### Tokens: least privilege and expiry", self.a)
        self.assertIn(b"open refused: exit 4", result.stdout)
        self.assertIn(b"lacks the open permission", result.stderr)
        self.assertRegex(result.stdout.decode(),
                         r"may seal on orders-\*  expires .*renewed from [0-9a-f]{16}"
                         r"  orders writer")


class AdminTokens(unittest.TestCase):
    """Admin tokens issued and revoked through the admin plane, on two replicas,
    without a restart."""

    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = start_replicas(2)
        cls.tenant_token = cls.a.new_tenant("acme")

    @classmethod
    def tearDownClass(cls):
        for server in (cls.a, cls.b):
            server.stop()

    def admin(self, server, token, *args, check=True):
        return server.cli("admin", *args, token=token, check=check)

    def test_a_second_admin_token_then_the_first_revoked(self):
        bootstrap = self.a.admin_token
        # Retiring the bootstrap token first would lock everyone out: refused.
        early = self.admin(self.a, bootstrap, "admin-token", "revoke", "bootstrap", check=False)
        self.assertEqual(early.returncode, 1, early.stderr)
        self.assertIn("issue one first", early.stderr.decode())

        # An admin token that expires: it works on both replicas, until it does not.
        brief = self.admin(self.a, bootstrap, "admin-token", "issue", "--ttl", "4s")
        brief = brief.stdout.decode().strip()
        self.admin(self.b, brief, "tenant", "list")
        brief_until = time.time() + 4

        issued = self.admin(self.a, bootstrap, "admin-token", "issue", "--description", "ops")
        ops = issued.stdout.decode().strip()
        ops_id = issued.stderr.decode().split("admin token ")[1].split(";")[0]
        # In force on the other replica at once, no restart.
        self.admin(self.b, ops, "tenant", "create", "from-b")
        reader = self.admin(self.b, ops, "admin-token", "issue", "--read-only",
                            "--description", "dashboard").stdout.decode().strip()
        listed = self.admin(self.a, reader, "admin-token", "list").stdout.decode()
        self.assertIn("bootstrap  in use", listed)
        self.assertIn(f"{ops_id}  ", listed)
        self.assertIn("read-only", listed)
        self.assertNotIn(ops, listed)
        # Read-only reads, and may do nothing else.
        self.assertIn("tenant acme", self.admin(self.b, reader, "tenant", "list").stdout.decode())
        denied = self.admin(self.a, reader, "key", "create", "acme", "nope", check=False)
        self.assertEqual(denied.returncode, 4, denied.stderr)
        self.assertIn("read-only", denied.stderr.decode())
        # Admin tokens are not for the data plane, nor tenant tokens for admin calls.
        wrong = self.a.cli("seal", "--key", "default", token=ops, input=b"x", check=False)
        self.assertEqual(wrong.returncode, 4, wrong.stderr)
        self.assertIn("PERMISSION_DENIED", wrong.stderr.decode())
        wrong = self.admin(self.a, self.tenant_token, "tenant", "list", check=False)
        self.assertIn("PERMISSION_DENIED", wrong.stderr.decode())

        # Retire the bootstrap token through b: refused on both replicas from then on
        # (on b at once; on a once it has read the change: its reload interval, or
        # milliseconds on etcd).
        self.admin(self.b, ops, "admin-token", "revoke", "bootstrap")
        for server in (self.b, self.a):
            wait_for(lambda: self.admin(server, bootstrap, "tenant", "list",
                                        check=False).returncode == 4,
                     "the bootstrap token is refused")
            gone = self.admin(server, bootstrap, "tenant", "list", check=False)
            self.assertIn("this admin token was retired", gone.stderr.decode())
        self.assertIn("bootstrap  retired",
                      self.admin(self.a, ops, "admin-token", "list").stdout.decode())

        # A third admin token, then the second (ops) revoked by it: refused everywhere.
        third = self.admin(self.a, ops, "admin-token", "issue").stdout.decode().strip()
        self.admin(self.b, third, "admin-token", "revoke", ops_id)
        for server in (self.b, self.a):
            wait_for(lambda: self.admin(server, ops, "tenant", "list",
                                        check=False).returncode == 4,
                     "the revoked admin token is refused")
            gone = self.admin(server, ops, "tenant", "list", check=False)
            self.assertIn("invalid admin token", gone.stderr.decode())
        self.admin(self.a, third, "key", "create", "acme", "made-by-third")

        time.sleep(max(0.0, brief_until - time.time()) + 1.5)
        for server in (self.a, self.b):
            expired = self.admin(server, brief, "tenant", "list", check=False)
            self.assertEqual(expired.returncode, 4, expired.stderr)
            self.assertIn("token expired", expired.stderr.decode())

        # The admin log names the admin token by id, never the token.
        log = self.a.output() + self.b.output()
        self.assertIn(f'"admin_token_id":"{ops_id}"', log)
        for secret in (bootstrap, ops, reader, third, brief):
            self.assertNotIn(secret, log)


class AdminTokensDoc(unittest.TestCase):
    def test_operations_doc_admin_token_commands(self):
        server = Server().start()
        try:
            result = run_operations_doc("### Admin tokens", server)
            self.assertIn(b"bootstrap refused: exit 4", result.stdout)
            self.assertIn(b"bootstrap  retired", result.stdout)
            self.assertRegex(result.stdout.decode(), r"read-only  expires .*  grafana")
        finally:
            server.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
