"""sealbox replicas sharing their keystore through a real etcd (Debian's etcd-server,
started here on loopback ports with fresh data directories): what a platform team
relies on when it runs several replicas, one etcd member or three, through races,
a killed leader, a whole cluster going away, compaction, tampering, TLS and auth,
and migration between the file and etcd."""
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
from harness import (  # noqa: E402
    SERVER, AdminClient, CryptoClient, Etcd, Pki, Server, admin_pb2, new_tenant, wait_for)


def replicas(etcd, count, prefix="/sealbox/", extra_args=()):
    """`count` servers on `etcd` sharing one keystore (the first one --init's it)."""
    kek, token = os.urandom(32), "admin-" + os.urandom(8).hex()
    return [Server(etcd=etcd, prefix=prefix, kek=kek, admin_token=token,
                   extra_args=extra_args).start() for _ in range(count)]


def stop_all(servers):
    for server in servers:
        server.stop()


def code_of(call):
    """The gRPC status code of a call, OK included."""
    try:
        call()
        return grpc.StatusCode.OK
    except grpc.RpcError as error:
        return error.code()


class NewUser(unittest.TestCase):
    """The path a new user takes, from the issue: etcd on loopback, two servers, the
    admin plane through one and the data plane through the other."""

    def test_two_servers_one_etcd(self):
        etcd = Etcd().start()
        self.addCleanup(etcd.close)
        a, b = replicas(etcd, 2)
        self.addCleanup(stop_all, [a, b])
        token = a.new_tenant("acme")
        # Through the other at once: no wait.
        sealed = b.cli("seal", "--key", "default", token=token, input=b"hello").stdout
        self.assertEqual(a.cli("open", "--key", "default", token=token, input=sealed).stdout,
                         b"hello")

        # A token revoked on a is refused by b within 100 ms.
        admin = AdminClient(a)
        client = CryptoClient(b.address)
        issued = admin.IssueToken(admin_pb2.IssueTokenRequest(tenant="acme"))
        self.assertTrue(client.seal("default", b"x", token=issued.token).ciphertext)
        admin.RevokeToken(admin_pb2.RevokeTokenRequest(tenant="acme", token_id=issued.info.id))
        revoked = time.monotonic()
        while code_of(lambda: client.seal("default", b"x", token=issued.token)) == \
                grpc.StatusCode.OK:
            self.assertLess(time.monotonic() - revoked, 5)
        self.assertLess(time.monotonic() - revoked, 0.1)

        # etcd stopped: Seal still works, admin says the keystore is unreachable.
        etcd.kill(0)
        wait_for(lambda: b.cli("health", "--service", "sealbox.v1.Admin",
                               check=False).returncode != 0, "Admin NOT_SERVING on b")
        self.assertEqual(b.cli("open", "--key", "default", token=token, input=sealed).stdout,
                         b"hello")
        b.cli("seal", "--key", "default", token=token, input=b"still")
        self.assertEqual(b.cli("health").returncode, 0)
        refused = b.admin("key", "rotate", "acme", "default", check=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn(b"UNAVAILABLE", refused.stderr)
        self.assertIn(b"is unreachable", refused.stderr)

        # etcd back: admin works again without restarting sealbox.
        etcd.start_member(0)
        wait_for(lambda: b.admin("key", "rotate", "acme", "default", check=False).returncode
                 == 0, "admin works on b again")
        # a reads its own snapshot: its watch, reconnecting with backoff after the
        # outage (at most 2 s apart), brings the rotation made through b.
        wait_for(lambda: b"primary v2" in a.admin("key", "get", "acme", "default").stdout,
                 "a sees the rotation made on b", seconds=5)
        self.assertIn('"event":"keystore_reachable"', b.output())


class ThreeReplicas(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.etcd = Etcd().start()
        cls.servers = replicas(cls.etcd, 3)
        cls.admins = [AdminClient(s) for s in cls.servers]
        cls.token = new_tenant(cls.admins[0], "shared", keys=("busy", "watched"))
        cls.clients = [CryptoClient(s.address, cls.token) for s in cls.servers]

    @classmethod
    def tearDownClass(cls):
        stop_all(cls.servers)
        cls.etcd.close()

    def test_a_change_on_one_is_in_force_on_the_others_within_100_ms(self):
        delays = []
        for i in range(30):
            writer = self.admins[i % 3]
            key = writer.RotateKey(admin_pb2.KeyRef(tenant="shared", key="watched"))
            changed = time.monotonic()
            for reader in (self.clients[(i + 1) % 3], self.clients[(i + 2) % 3]):
                while int.from_bytes(reader.seal("watched", b"x").ciphertext[1:5], "big") \
                        != key.primary_version:
                    self.assertLess(time.monotonic() - changed, 5)
                delays.append(time.monotonic() - changed)
        delays.sort()
        p99 = delays[int(len(delays) * 0.99)]
        print(f"propagation over {len(delays)} reads: median "
              f"{statistics.median(delays) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
        self.assertLess(p99, 0.1)

    def test_300_concurrent_rotations_over_three_servers(self):
        samples = []

        def rotate(i):
            code = code_of(lambda: self.admins[i % 3].RotateKey(
                admin_pb2.KeyRef(tenant="shared", key="busy")))
            if i % 10 == 0:  # something sealed by each replica as the key turns
                samples.append(self.clients[i % 3].seal("busy", b"sample %d" % i).ciphertext)
            return code

        with ThreadPoolExecutor(max_workers=30) as pool:
            codes = list(pool.map(rotate, range(300)))
        ok = codes.count(grpc.StatusCode.OK)
        self.assertTrue(set(codes) <= {grpc.StatusCode.OK, grpc.StatusCode.ABORTED}, codes)
        print(f"300 racing rotations: {ok} OK, {codes.count(grpc.StatusCode.ABORTED)} ABORTED")
        self.assertGreater(ok, 200)
        for admin in self.admins:
            wait_for(lambda: admin.GetKey(admin_pb2.KeyRef(tenant="shared", key="busy"))
                     .primary_version == 1 + ok, "every replica has every rotation")
            versions = [v.version for v in admin.GetKey(
                admin_pb2.KeyRef(tenant="shared", key="busy")).versions]
            self.assertEqual(versions, list(range(1, 2 + ok)))  # no duplicate, no gap
        for ciphertext in samples:
            for client in self.clients:
                self.assertTrue(client.open("busy", ciphertext).startswith(b"sample"))


class ThreeMembers(unittest.TestCase):
    """A three-member etcd cluster under two sealbox replicas."""

    def setUp(self):
        self.etcd = Etcd(members=3).start()
        self.addCleanup(self.etcd.close)
        self.servers = replicas(self.etcd, 2)
        self.addCleanup(stop_all, self.servers)
        self.admins = [AdminClient(s) for s in self.servers]
        self.token = new_tenant(self.admins[0], "acme")
        self.clients = [CryptoClient(s.address, self.token) for s in self.servers]

    def load(self, stop, failures, done, retried):
        """Seal on one replica, open on the other, until `stop`. An UNAVAILABLE is
        tried again, for up to 5 s, as a client with a retry policy would: a version
        sealed through one replica during the election may be one the other cannot
        learn of until etcd has a leader again (it says so, and to try again)."""
        i = 0
        while not stop.is_set():
            try:
                sealed = self.retrying(
                    lambda: self.clients[i % 2].seal("default", b"load %d" % i), retried)
                self.retrying(
                    lambda: self.clients[(i + 1) % 2].open("default", sealed.ciphertext), retried)
                done.append(i)
            except grpc.RpcError as error:
                failures.append(f"{error.code()}: {error.details()}")
            i += 1

    @staticmethod
    def retrying(call, retried):
        deadline = time.monotonic() + 5
        while True:
            try:
                return call()
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise
                retried.append(error.details())
                time.sleep(0.1)

    def test_leader_killed_under_load(self):
        stop, failures, done, acknowledged, retried = threading.Event(), [], [], [], []
        loader = threading.Thread(target=self.load, args=(stop, failures, done, retried))
        loader.start()
        leader = self.etcd.leader()
        admin_errors = []
        for i in range(40):
            if i == 10:
                self.etcd.kill(leader)
                killed_at = len(acknowledged)
            try:
                key = self.admins[i % 2].RotateKey(admin_pb2.KeyRef(tenant="acme", key="default"))
                acknowledged.append(key.primary_version)
            except grpc.RpcError as error:
                admin_errors.append(error.code())
                time.sleep(0.2)
        stop.set()
        loader.join()
        print(f"leader killed: {len(done)} seal+open pairs, {len(failures)} failed, "
              f"{len(retried)} UNAVAILABLE tried again; admin {len(acknowledged)} OK, "
              f"{len(admin_errors)} failed meanwhile")
        self.assertEqual(failures, [])
        self.assertGreater(len(acknowledged), killed_at, "admin resumed after the election")
        self.assertTrue(set(admin_errors) <= {grpc.StatusCode.UNAVAILABLE}, admin_errors)
        for admin in self.admins:
            wait_for(lambda: set(acknowledged) <= {
                v.version for v in admin.GetKey(admin_pb2.KeyRef(tenant="acme",
                                                                 key="default")).versions},
                "every acknowledged rotation on every replica")

    def test_every_member_stopped_for_10_seconds(self):
        sealed = self.clients[0].seal("default", b"before").ciphertext
        for member in range(3):
            self.etcd.kill(member)
        stop, failures, done, retried = threading.Event(), [], [], []
        loader = threading.Thread(target=self.load, args=(stop, failures, done, retried))
        loader.start()
        deadline = time.monotonic() + 10
        wait_for(lambda: code_of(lambda: self.admins[1].ListTenants(
            admin_pb2.ListTenantsRequest())) == grpc.StatusCode.UNAVAILABLE,
            "admin UNAVAILABLE")
        for admin in self.admins:
            self.assertEqual(code_of(lambda: admin.RotateKey(
                admin_pb2.KeyRef(tenant="acme", key="default"))), grpc.StatusCode.UNAVAILABLE)
        time.sleep(max(0, deadline - time.monotonic()))
        for member in range(3):
            self.etcd.start_member(member)
        self.etcd.wait_healthy(range(3))
        for admin in self.admins:
            wait_for(lambda: code_of(lambda: admin.RotateKey(
                admin_pb2.KeyRef(tenant="acme", key="default"))) == grpc.StatusCode.OK,
                "admin works again without a restart")
        stop.set()
        loader.join()
        print(f"etcd down 10 s: {len(done)} seal+open pairs, {len(failures)} failed")
        self.assertEqual(failures, [])
        self.assertEqual(retried, [])  # one key version, within the bound: never refused
        self.assertGreater(len(done), 0)
        self.assertEqual(self.clients[1].open("default", sealed), b"before")


class CompactedWatch(unittest.TestCase):
    def test_a_paused_server_recovers_by_full_reload(self):
        etcd = Etcd().start()
        self.addCleanup(etcd.close)
        a, b = replicas(etcd, 2)
        self.addCleanup(stop_all, [a, b])
        token = a.new_tenant("acme")
        b.process.send_signal(signal.SIGSTOP)
        try:
            # etcd restarts while b sleeps: b's watch is gone, but b cannot know yet.
            etcd.kill(0)
            etcd.start_member(0)
            etcd.wait_healthy([0])
            wait_for(lambda: a.admin("key", "rotate", "acme", "default",
                                     check=False).returncode == 0, "a writes again")
            for _ in range(2):
                a.admin("key", "rotate", "acme", "default")
            a.new_tenant("later")
            # The revisions b would resume its watch from are compacted away.
            etcd.etcdctl("compact", str(etcd.revision()))
        finally:
            b.process.send_signal(signal.SIGCONT)
        # Its watch is found broken first: admin calls are UNAVAILABLE for a moment.
        wait_for(lambda: b"primary v4" in b.admin("key", "get", "acme", "default",
                                                  check=False).stdout,
                 "b has the rotations made while it was paused")
        # Whichever finds the gap first reloads everything at one revision: the watch
        # resuming into the compaction, or the heartbeat that found etcd again (its
        # relist; //server/keystore/etcd:etcd_storage_test covers compaction alone).
        self.assertRegex(b.output(), r'"event":"keystore_reloaded".*"reason":"(watch '
                                     r'compacted|caught up after an outage)"')
        b.cli("seal", "--key", "default", token=token, input=b"x")
        self.assertIn(b"later", b.admin("tenant", "list").stdout)


class Refusals(unittest.TestCase):
    """What a server refuses to load, with the error an operator reads."""

    def setUp(self):
        self.etcd = Etcd().start()
        self.addCleanup(self.etcd.close)
        self.server = Server(etcd=self.etcd, prefix="/r/").start()
        self.server.new_tenant("acme")
        self.server.new_tenant("evil")
        self.server.stop()

    def refusal(self, kek=None):
        server = Server(etcd=self.etcd, prefix="/r/",
                        kek=kek or open(self.server.kek_file, "rb").read())
        with self.assertRaises(RuntimeError) as failure:
            server.start()
        return str(failure.exception)

    def value(self, key):
        return subprocess.run(
            ["/usr/bin/etcdctl", "--endpoints", self.etcd.endpoints, "get", key,
             "--print-value-only"], capture_output=True, check=True,
            env=dict(os.environ, ETCDCTL_API="3")).stdout[:-1]  # etcdctl adds a newline

    def put(self, key, value):
        subprocess.run(["/usr/bin/etcdctl", "--endpoints", self.etcd.endpoints, "put", key],
                       input=value, capture_output=True, check=True,
                       env=dict(os.environ, ETCDCTL_API="3"))

    def test_wrong_kek(self):
        self.assertIn("etcd keystore /r/ at ", self.refusal(kek=os.urandom(32)))
        self.assertIn("was written with a different KEK", self.refusal(kek=os.urandom(32)))

    def test_a_value_moved_to_another_name_or_tenant(self):
        good = self.value("/r/tenants/acme/keys/default")
        self.put("/r/tenants/evil/keys/default", good)
        self.assertIn("etcd record /r/tenants/evil/keys/default is damaged, or was moved "
                      "there from another name", self.refusal())

    def test_a_truncated_value(self):
        good = self.value("/r/tenants/acme/keys/default")
        self.put("/r/tenants/acme/keys/default", good[:-3])
        self.assertIn("etcd record /r/tenants/acme/keys/default is damaged", self.refusal())


class TlsAndPassword(unittest.TestCase):
    """etcd with TLS, client certificates and authentication, as production runs it."""

    def test_tls_client_certificate_and_password(self):
        pki = Pki()
        ca, ca_key = pki.make_ca("etcd-ca", "etcd test CA")
        server_cert, server_key = pki.issue("etcd-server", "/CN=etcd",
                                            "subjectAltName=IP:127.0.0.1", ca, ca_key)
        client_cert, client_key = pki.issue("sealbox", "/CN=sealbox",
                                            "extendedKeyUsage=clientAuth", ca, ca_key)
        etcd = Etcd(extra_args=["--cert-file", server_cert, "--key-file", server_key,
                                "--trusted-ca-file", ca, "--client-cert-auth"])
        etcd.scheme = "https"
        tls = ["--cacert", ca, "--cert", client_cert, "--key", client_key]
        etcd.tls_args = lambda: tls
        etcd.start()
        self.addCleanup(etcd.close)
        password = "pw-" + os.urandom(8).hex()
        for command in (["user", "add", "root:" + os.urandom(8).hex()],
                        ["user", "add", "sealbox:" + password],
                        ["role", "add", "sealbox"],
                        ["role", "grant-permission", "sealbox", "--prefix=true",
                         "readwrite", "/secure/"],
                        ["user", "grant-role", "sealbox", "sealbox"],
                        ["auth", "enable"]):
            etcd.etcdctl(*command)
        password_file = os.path.join(pki.dir, "etcd-password")
        with open(password_file, "w") as f:
            f.write(password + "\n")
        tls_flags = ["--etcd-ca", ca, "--etcd-cert", client_cert, "--etcd-key", client_key,
                     "--etcd-user", "sealbox"]
        kek, admin = os.urandom(32), "admin-" + os.urandom(8).hex()

        def server(*extra):
            return Server(etcd=etcd, prefix="/secure/", kek=kek, admin_token=admin,
                          extra_args=tls_flags + list(extra))

        a = server("--etcd-password-file", password_file).start()
        self.addCleanup(a.stop)
        token = a.new_tenant("acme")
        # The password may also come from the environment, never from a flag.
        b = Server(etcd=etcd, prefix="/secure/", kek=kek, admin_token=admin,
                   extra_args=tls_flags, env={"SEALBOX_ETCD_PASSWORD": password}).start()
        self.addCleanup(b.stop)
        sealed = b.cli("seal", "--key", "default", token=token, input=b"over tls").stdout
        self.assertEqual(a.cli("open", "--key", "default", token=token, input=sealed).stdout,
                         b"over tls")
        self.assertNotIn(password, a.output() + b.output())

        # A wrong password, or no client certificate, stops startup with etcd's reason.
        wrong = os.path.join(pki.dir, "wrong-password")
        with open(wrong, "w") as f:
            f.write("not-it\n")
        with self.assertRaises(RuntimeError) as failure:
            server("--etcd-password-file", wrong).start()
        self.assertIn("authentication failed", str(failure.exception))
        self.assertNotIn("not-it", str(failure.exception))
        # Outside its prefix the user has no permission.
        with self.assertRaises(RuntimeError) as failure:
            Server(etcd=etcd, prefix="/elsewhere/", kek=kek, admin_token=admin,
                   extra_args=tls_flags + ["--etcd-password-file", password_file]).start()
        self.assertIn("permission denied", str(failure.exception))


class RenewedFiles(unittest.TestCase):
    """The etcd client certificate, its key and the etcd password are read again when
    their files change: a replica follows a renewed certificate and a changed password
    without a restart."""

    def setUp(self):
        self.pki = Pki()
        ca, ca_key = self.pki.make_ca("etcd-ca", "etcd test CA")
        self.ca, self.ca_key = ca, ca_key
        server_cert, server_key = self.pki.issue("etcd-server", "/CN=etcd",
                                                 "subjectAltName=IP:127.0.0.1", ca, ca_key)
        root_cert, root_key = self.pki.issue("root", "/CN=root", "extendedKeyUsage=clientAuth",
                                             ca, ca_key)
        # Simple tokens that expire after a second, so logins come often.
        self.etcd = Etcd(extra_args=["--cert-file", server_cert, "--key-file", server_key,
                                     "--trusted-ca-file", ca, "--client-cert-auth",
                                     "--auth-token", "simple", "--auth-token-ttl", "1"])
        self.etcd.scheme = "https"
        self.root_password = "root-" + os.urandom(8).hex()
        tls = ["--cacert", ca, "--cert", root_cert, "--key", root_key]
        self.etcd.tls_args = lambda: tls
        self.etcd.start()
        self.addCleanup(self.etcd.close)
        self.etcd.etcdctl("user", "add", "root:" + self.root_password)
        self.etcd.etcdctl("role", "add", "sealbox")
        self.etcd.etcdctl("role", "grant-permission", "sealbox", "--prefix=true", "readwrite",
                          "/renewed/")
        self.etcd.etcdctl("auth", "enable")

    def as_root(self, *args, input=None):
        return self.etcd.etcdctl("--user", "root:" + self.root_password, *args, input=input)

    def add_user(self, name, password=None):
        if password is None:
            self.as_root("user", "add", name, "--no-password")
        else:
            self.as_root("user", "add", f"{name}:{password}")
        self.as_root("user", "grant-role", name, "sealbox")

    def replica(self, cert, key, *extra):
        server = Server(etcd=self.etcd, prefix="/renewed/",
                        extra_args=["--etcd-ca", self.ca, "--etcd-cert", cert, "--etcd-key", key,
                                    "--tls-reload-seconds", "1"] + list(extra)).start()
        self.addCleanup(server.stop)
        return server

    def rotates(self, server, seconds=20):
        """Whether an admin write through `server` works again within `seconds`."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if server.admin("key", "rotate", "acme", "default", check=False).returncode == 0:
                return True
            time.sleep(0.2)
        return False

    def test_a_renewed_client_certificate(self):
        # Without --etcd-user, etcd takes the user from the certificate's CN.
        for name in ("sealbox-a", "sealbox-b"):
            self.add_user(name)
        cert_a, key_a = self.pki.issue("sealbox-a", "/CN=sealbox-a",
                                       "extendedKeyUsage=clientAuth", self.ca, self.ca_key)
        cert_b, key_b = self.pki.issue("sealbox-b", "/CN=sealbox-b",
                                       "extendedKeyUsage=clientAuth", self.ca, self.ca_key)
        live_cert, live_key = self.pki.path("live.pem"), self.pki.path("live.key")
        shutil.copy(cert_a, live_cert)
        shutil.copy(key_a, live_key)
        server = self.replica(live_cert, live_key)
        token = server.new_tenant("acme")
        # The certificate is renewed (here: for another etcd user), and the old user
        # removed: only connections made with the new files are let in.
        shutil.copy(key_b, live_key + ".new")
        shutil.copy(cert_b, live_cert + ".new")
        os.replace(live_key + ".new", live_key)
        os.replace(live_cert + ".new", live_cert)
        time.sleep(2)  # --tls-reload-seconds
        self.as_root("user", "delete", "sealbox-a")
        self.assertTrue(self.rotates(server), server.output()[-3000:])
        self.assertEqual(server.cli("open", "--key", "default", token=token,
                                    input=server.cli("seal", "--key", "default", token=token,
                                                     input=b"renewed").stdout).stdout,
                         b"renewed")

    def test_a_changed_password(self):
        old, new = "old-" + os.urandom(8).hex(), "new-" + os.urandom(8).hex()
        self.add_user("sealbox", old)
        cert, key = self.pki.issue("sealbox", "/CN=sealbox", "extendedKeyUsage=clientAuth",
                                   self.ca, self.ca_key)
        password_file = self.pki.path("etcd-password")
        with open(password_file, "w") as f:
            f.write(old + "\n")
        server = self.replica(cert, key, "--etcd-user", "sealbox",
                              "--etcd-password-file", password_file)
        server.new_tenant("acme")
        # etcd's password and the file change; the replica's token expires within a
        # second, and its next login reads the file again.
        self.as_root("user", "passwd", "sealbox", "--interactive=false",
                     input=(new + "\n").encode())
        with open(password_file + ".new", "w") as f:
            f.write(new + "\n")
        os.replace(password_file + ".new", password_file)
        time.sleep(2)
        self.assertTrue(self.rotates(server), server.output()[-3000:])
        self.assertNotIn(old, server.output())
        self.assertNotIn(new, server.output())


class Migration(unittest.TestCase):
    def test_file_to_etcd_to_file(self):
        etcd = Etcd().start()
        self.addCleanup(etcd.close)
        kek = os.urandom(32)
        on_file = Server(kek=kek).start()
        token = on_file.new_tenant("acme")
        on_file.admin("key", "rotate", "acme", "default")
        sealed = on_file.cli("seal", "--key", "default", token=token, input=b"moved").stdout
        on_file.stop()

        def transfer(flag, data_dir, prefix="/migrated/"):
            return subprocess.run(
                SERVER + [flag, "--data-dir", data_dir, "--etcd-endpoints", etcd.endpoints,
                          "--etcd-prefix", prefix, "--kek-file", on_file.kek_file],
                capture_output=True, timeout=60)

        done = transfer("--migrate-keystore", on_file.data_dir)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn(b"copied 1 tenants, 1 keys, 1 tokens", done.stdout)
        self.assertIn(b"read them back the same", done.stdout)
        again = transfer("--migrate-keystore", on_file.data_dir)
        self.assertEqual(again.returncode, 1)
        self.assertIn(b"is not empty", again.stderr)

        on_etcd = Server(etcd=etcd, prefix="/migrated/", kek=kek,
                         admin_token=on_file.admin_token).start()
        self.addCleanup(on_etcd.stop)
        self.assertEqual(on_etcd.cli("open", "--key", "default", token=token,
                                     input=sealed).stdout, b"moved")
        on_etcd.admin("key", "rotate", "acme", "default")

        backup = os.path.join(on_file.home, "backup")
        done = transfer("--export-keystore", backup)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(transfer("--export-keystore", backup).returncode, 1)  # exists
        restored = Server(data_dir=backup, kek=kek, admin_token=on_file.admin_token).start()
        self.addCleanup(restored.stop)
        self.assertEqual(restored.cli("open", "--key", "default", token=token,
                                      input=sealed).stdout, b"moved")
        self.assertIn(b"primary v3", restored.admin("key", "get", "acme", "default").stdout)
        for output in (done.stdout, done.stderr):
            self.assertNotIn(token.encode(), output)


if __name__ == "__main__":
    unittest.main(verbosity=2)
