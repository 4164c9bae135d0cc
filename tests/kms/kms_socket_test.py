"""The KMS v2 socket (--kms-socket) against the real server binary: every call over a
real unix socket, the key_id rules kube-apiserver relies on, the socket file's
permissions and life, and the data plane's metrics, audit log and decryption limit
applied to KMS calls. (The kube-apiserver stand-in is tests/kms/apiserver.)"""

import atexit
import grp
import importlib
import json
import os
import shutil
import socket
import stat
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))

from harness import AdminClient, CryptoClient, Server, new_tenant, stubs, wait_for  # noqa: E402

import grpc  # noqa: E402

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../proto")
DEADLINE = 3  # kube-apiserver's default KMS timeout


def kms_stubs():
    """(kms_pb2, kms_pb2_grpc) of k8s/kms/v2/kms.proto, compiled at run time."""
    from grpc_tools import protoc
    out = tempfile.mkdtemp(prefix="kms-stubs-", dir=os.environ.get("TEST_TMPDIR"))
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    if protoc.main(["protoc", f"-I{PROTO_DIR}", f"-I{include}", f"--python_out={out}",
                    f"--grpc_python_out={out}",
                    os.path.join(PROTO_DIR, "k8s/kms/v2/kms.proto")]) != 0:
        raise RuntimeError("protoc failed on kms.proto")
    sys.path.insert(0, out)
    return (importlib.import_module("k8s.kms.v2.kms_pb2"),
            importlib.import_module("k8s.kms.v2.kms_pb2_grpc"))


pb, pb_grpc = kms_stubs()


def socket_dir():
    """A new directory for a socket, under /tmp: Bazel's test directory is longer
    than a unix socket's path may be. Removed at exit."""
    path = tempfile.mkdtemp(prefix="sbx-kms-", dir="/tmp")
    atexit.register(shutil.rmtree, path, True)
    return path


def kms_server(key="acme/k8s", extra_args=(), socket_path=None):
    """A server (not started) whose KMS socket serves `key`: (server, socket path)."""
    home = socket_dir()
    path = socket_path or os.path.join(home, "kms.sock")
    return Server(extra_args=["--kms-socket", path, "--kms-key", key] + list(extra_args)), path


class Kms:
    """A KMS v2 client on a unix socket, as kube-apiserver dials it."""

    def __init__(self, path):
        self.channel = grpc.insecure_channel(f"unix://{path}")
        self.stub = pb_grpc.KeyManagementServiceStub(self.channel)

    def status(self):
        return self.stub.Status(pb.StatusRequest(), timeout=DEADLINE)

    def encrypt(self, plaintext, uid="uid-encrypt"):
        return self.stub.Encrypt(pb.EncryptRequest(plaintext=plaintext, uid=uid),
                                 timeout=DEADLINE)

    def decrypt(self, ciphertext, key_id="", uid="uid-decrypt"):
        return self.stub.Decrypt(pb.DecryptRequest(ciphertext=ciphertext, uid=uid,
                                                   key_id=key_id), timeout=DEADLINE).plaintext

    def close(self):
        self.channel.close()


class KmsCalls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server, cls.path = kms_server(extra_args=[
            "--audit", "all", "--audit-log", "AUDIT", "--max-decryption-failures-per-key", "5"])
        cls.audit = os.path.join(cls.server.home, "audit.log")
        cls.server.extra_args[cls.server.extra_args.index("AUDIT")] = cls.audit
        cls.server.start()
        cls.admin = AdminClient(cls.server)
        cls.token = new_tenant(cls.admin, "acme", keys=("k8s", "other"))
        cls.kms = Kms(cls.path)

    @classmethod
    def tearDownClass(cls):
        cls.kms.close()
        cls.admin.close()
        cls.server.stop()

    def test_a_seed_round_trip_under_the_status_key_id(self):
        status = self.kms.status()
        self.assertEqual((status.version, status.healthz), ("v2", "ok"))
        self.assertRegex(status.key_id, r"^sealbox:acme/k8s:v\d+:[0-9a-f]{16}$")
        seed = os.urandom(32)
        encrypted = self.kms.encrypt(seed)
        self.assertEqual(encrypted.key_id, status.key_id)
        self.assertLessEqual(len(encrypted.ciphertext), 1024)
        self.assertEqual(dict(encrypted.annotations), {})
        self.assertEqual(self.kms.decrypt(encrypted.ciphertext, encrypted.key_id), seed)
        # The same seed twice: two ciphertexts (fresh nonces), both open.
        again = self.kms.encrypt(seed)
        self.assertNotEqual(again.ciphertext, encrypted.ciphertext)
        self.assertEqual(self.kms.decrypt(again.ciphertext, ""), seed)

    def test_a_rotation_changes_the_key_id_and_old_seeds_still_open(self):
        before = self.kms.status().key_id
        old = self.kms.encrypt(b"s" * 32)
        self.admin.RotateKey(stubs()[0].KeyRef(tenant="acme", key="k8s"))
        after = self.kms.status()
        self.assertEqual(after.healthz, "ok")
        self.assertNotEqual(after.key_id, before)
        new = self.kms.encrypt(b"t" * 32)
        self.assertEqual(new.key_id, after.key_id)
        # Whatever key_id the request names: the ciphertext says its version.
        self.assertEqual(self.kms.decrypt(old.ciphertext, after.key_id), b"s" * 32)
        self.assertEqual(self.kms.decrypt(new.ciphertext, before), b"t" * 32)

    def test_bad_input_is_refused_with_reasons(self):
        cases = [
            (lambda: self.kms.decrypt(b""), "the ciphertext is 0 bytes"),
            (lambda: self.kms.decrypt(b"x" * 1025), "the ciphertext is 1025 bytes"),
            (lambda: self.kms.encrypt(b""), "the plaintext is 0 bytes"),
            (lambda: self.kms.encrypt(b"x" * 2000), "the plaintext is 2000 bytes"),
        ]
        for call, message in cases:
            with self.assertRaises(grpc.RpcError) as refused:
                call()
            self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn(message, refused.exception.details())

    def test_a_malformed_request_is_refused_naming_its_type_and_audited(self):
        # A field 1 (bytes) whose length runs past the end: no protobuf parser takes it.
        truncated = b"\x0a\x20" + b"x" * 5
        for method in ("Status", "Encrypt", "Decrypt"):
            call = self.kms.channel.unary_unary(f"/v2.KeyManagementService/{method}")
            with self.assertRaises(grpc.RpcError) as refused:
                call(truncated, timeout=DEADLINE)
            self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, method)
            self.assertEqual(refused.exception.details(),
                             f"the request is not a valid v2.{method}Request")

        def refused_lines():
            with open(self.audit) as f:
                return [line for line in map(json.loads, f)
                        if line.get("service") == "v2.KeyManagementService"
                        and line.get("code") == "INVALID_ARGUMENT"
                        and line.get("request_bytes") == len(truncated)]
        wait_for(lambda: len(refused_lines()) >= 3, "audit lines for the malformed requests")

    def test_a_ciphertext_of_another_key_is_refused_naming_both(self):
        crypto = CryptoClient(self.server.address, token=self.token)
        try:
            # Sealed by the data plane under acme/other, with the KMS associated data.
            other = crypto.seal("other", b"z" * 32, aad=b"kubernetes kms v2").ciphertext
        finally:
            crypto.close()
        with self.assertRaises(grpc.RpcError) as refused:
            self.kms.decrypt(other, "sealbox:acme/other:v1:0011223344556677")
        self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn('decryption failed: its key_id names key "acme/other", this socket '
                      'serves key "acme/k8s"', refused.exception.details())

    def test_a_data_plane_ciphertext_is_no_seed(self):
        crypto = CryptoClient(self.server.address, token=self.token)
        try:
            sealed = crypto.seal("k8s", b"q" * 32).ciphertext  # no associated data
        finally:
            crypto.close()
        with self.assertRaises(grpc.RpcError) as refused:
            self.kms.decrypt(sealed)
        self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("decryption failed", refused.exception.details())

    def test_calls_are_counted_and_audited_with_their_uid(self):
        seed = os.urandom(32)
        ciphertext = self.kms.encrypt(seed, uid="uid-a").ciphertext
        self.kms.decrypt(ciphertext, uid="uid-b")
        metrics = urllib.request.urlopen(
            f"http://127.0.0.1:{self.server.metrics_port}/metrics", timeout=10).read().decode()
        for method in ("KmsStatus", "KmsEncrypt", "KmsDecrypt"):
            self.assertRegex(metrics, rf'sealbox_rpcs_total{{[^}}]*method="{method}"')

        def lines():
            with open(self.audit) as f:
                return [json.loads(line) for line in f if '"kms_uid"' in line]
        wait_for(lambda: {"uid-a", "uid-b"} <= {line["kms_uid"] for line in lines()},
                 "audit lines for uid-a and uid-b")
        for line in lines():
            if line["kms_uid"] in ("uid-a", "uid-b"):
                self.assertEqual(line["service"], "v2.KeyManagementService")
                self.assertIn(line["method"], ("Encrypt", "Decrypt"))
                self.assertEqual((line["tenant"], line["key"]), ("acme", "k8s"))
                self.assertEqual(line["credential"], "kms_socket")
                self.assertEqual(line["code"], "OK")
                self.assertGreater(line["key_version"], 0)

    def test_the_socket_is_the_owners_alone_by_default(self):
        mode = os.stat(self.path).st_mode
        self.assertTrue(stat.S_ISSOCK(mode))
        self.assertEqual(stat.S_IMODE(mode), 0o600)


class KmsDecryptionLimit(unittest.TestCase):
    def test_failed_decrypts_count_against_the_key_on_both_planes(self):
        server, path = kms_server(extra_args=["--max-decryption-failures-per-key", "3"])
        server.start()
        admin = AdminClient(server)
        kms = Kms(path)
        try:
            token = new_tenant(admin, "acme", keys=("k8s",))
            good = kms.encrypt(b"g" * 32).ciphertext
            forged = good[:-1] + bytes([good[-1] ^ 1])
            for _ in range(3):
                with self.assertRaises(grpc.RpcError):
                    kms.decrypt(forged)
            with self.assertRaises(grpc.RpcError) as refused:
                kms.decrypt(good)
            self.assertEqual(refused.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
            crypto = CryptoClient(server.address, token=token)
            try:
                sealed = crypto.seal("k8s", b"x").ciphertext
                with self.assertRaises(grpc.RpcError) as data_plane:
                    crypto.open("k8s", sealed)
                self.assertEqual(data_plane.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
            finally:
                crypto.close()
        finally:
            kms.close()
            admin.close()
            server.stop()


class KmsStatusHealth(unittest.TestCase):
    def test_a_missing_key_is_named_and_then_found(self):
        server, path = kms_server(key="acme/later")
        server.start()
        admin = AdminClient(server)
        kms = Kms(path)
        try:
            status = kms.status()
            self.assertEqual(status.key_id, "")
            self.assertIn('key "acme/later" does not exist', status.healthz)
            with self.assertRaises(grpc.RpcError) as refused:
                kms.encrypt(b"s" * 32)
            self.assertEqual(refused.exception.code(), grpc.StatusCode.NOT_FOUND)
            new_tenant(admin, "acme", keys=("later",))
            self.assertEqual(kms.status().healthz, "ok")
        finally:
            kms.close()
            admin.close()
            server.stop()

    def test_a_disabled_key_fails_status_and_every_call_until_enabled(self):
        server, path = kms_server()
        server.start()
        admin = AdminClient(server)
        kms = Kms(path)
        ref = stubs()[0].KeyRef(tenant="acme", key="k8s")
        try:
            new_tenant(admin, "acme", keys=("k8s",))
            ok = kms.status()
            sealed = kms.encrypt(b"d" * 32)
            admin.DisableKey(ref)
            status = kms.status()
            self.assertEqual(status.key_id, "")
            self.assertEqual(status.healthz, 'key "acme/k8s" is disabled in sealbox: nothing '
                             "seals or opens with it (enable it: sealbox admin key enable-key "
                             "acme k8s)")
            for call in (lambda: kms.encrypt(b"e" * 32),
                         lambda: kms.decrypt(sealed.ciphertext, sealed.key_id)):
                with self.assertRaises(grpc.RpcError) as refused:
                    call()
                self.assertEqual(refused.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
                self.assertIn('key "k8s" is disabled', refused.exception.details())
            admin.EnableKey(ref)
            self.assertEqual(kms.status().key_id, ok.key_id, "the same key, the same key_id")
            self.assertEqual(kms.decrypt(sealed.ciphertext, sealed.key_id), b"d" * 32)
        finally:
            kms.close()
            admin.close()
            server.stop()

    def test_a_stale_keystore_fails_status_until_it_is_current(self):
        server, path = kms_server(extra_args=["--max-staleness", "2s"])
        server.start()
        admin = AdminClient(server)
        kms = Kms(path)
        keystore = os.path.join(server.data_dir, "keystore.sbx")
        try:
            new_tenant(admin, "acme", keys=("k8s",))
            self.assertEqual(kms.status().healthz, "ok")
            os.rename(keystore, keystore + ".away")  # the file backend cannot read it
            wait_for(lambda: kms.status().healthz != "ok", "Status failing", seconds=10)
            healthz = kms.status().healthz
            self.assertIn('sealbox cannot serve key "acme/k8s"', healthz)
            self.assertIn("max-staleness", healthz)
            with self.assertRaises(grpc.RpcError) as refused:
                kms.encrypt(b"s" * 32)
            self.assertEqual(refused.exception.code(), grpc.StatusCode.UNAVAILABLE)
            os.rename(keystore + ".away", keystore)
            wait_for(lambda: kms.status().healthz == "ok", "Status ok again", seconds=10)
        finally:
            kms.close()
            admin.close()
            server.stop()


class KmsSocketFile(unittest.TestCase):
    def test_mode_and_group_are_set_before_the_socket_is_reachable(self):
        group = grp.getgrgid(os.getgid() if os.getgid() != 0 else 1)  # "daemon" as root
        server, path = kms_server(extra_args=[
            "--kms-socket-mode", "0660", "--kms-socket-group", group.gr_name])
        server.start()
        try:
            st = os.stat(path)
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o660)
            self.assertEqual(st.st_gid, group.gr_gid)
            self.assertEqual([n for n in os.listdir(os.path.dirname(path)) if ".tmp" in n], [])
        finally:
            server.stop()
        self.assertFalse(os.path.exists(path), "the socket is removed at exit")

    def test_a_dead_socket_is_replaced_and_a_live_one_is_not(self):
        path = os.path.join(socket_dir(), "kms.sock")
        leftover = socket.socket(socket.AF_UNIX)
        leftover.bind(path)  # a socket file nobody listens on: a server that died
        leftover.close()
        first, _ = kms_server(socket_path=path)
        first.start()
        try:
            self.assertEqual(Kms(path).status().version, "v2")
            second, _ = kms_server(socket_path=path)
            with self.assertRaises(RuntimeError) as failed:
                second.start()
            self.assertIn(f"another process serves {path}", str(failed.exception))
            self.assertEqual(Kms(path).status().version, "v2")  # still the first's
        finally:
            first.stop()

    def test_a_file_in_the_way_is_left_alone(self):
        path = os.path.join(socket_dir(), "kms.sock")
        with open(path, "w") as f:
            f.write("not a socket")
        server, _ = kms_server(socket_path=path)
        with self.assertRaises(RuntimeError) as failed:
            server.start()
        self.assertIn("exists and is not a socket", str(failed.exception))
        with open(path) as f:
            self.assertEqual(f.read(), "not a socket")

    def test_the_socket_alone_without_a_grpc_listener(self):
        # The keystore is made (tenant and key) by a server with a TCP listener, as
        # another replica or the node's admin would; the plugin then serves only the
        # socket.
        maker = Server().start()
        try:
            admin = AdminClient(maker)
            new_tenant(admin, "acme", keys=("k8s",))
            admin.close()
        finally:
            maker.stop()
        server, path = kms_server()
        server.data_dir, server.prefix, server.kek_file = (
            maker.data_dir, maker.prefix, maker.kek_file)
        server.start(listen="none")
        try:
            self.assertEqual(server.port, 0)
            self.assertNotIn('"event":"listening"', server.output())
            kms = Kms(path)
            status = kms.status()
            self.assertEqual(status.healthz, "ok")
            sealed = kms.encrypt(b"k" * 32)
            self.assertEqual(sealed.key_id, status.key_id)
            self.assertEqual(kms.decrypt(sealed.ciphertext, sealed.key_id), b"k" * 32)
            kms.close()
        finally:
            server.stop()
        alone = Server(extra_args=[])
        with self.assertRaises(RuntimeError) as failed:
            alone.start(listen="none")
        self.assertIn("--listen=none serves nothing without --kms-socket", str(failed.exception))

    def test_flags_are_checked(self):
        for args, message in [
            (["--kms-socket", "/tmp/x.sock"], "--kms-key must be TENANT/KEY"),
            (["--kms-socket", "/tmp/x.sock", "--kms-key", "acme"], "--kms-key must be TENANT/KEY"),
            (["--kms-key", "acme/k"], "--kms-key needs --kms-socket"),
            (["--kms-socket", "/tmp/x.sock", "--kms-key", "acme/k", "--kms-socket-mode", "rw"],
             "--kms-socket-mode must be octal"),
            (["--kms-socket", "/tmp/x.sock", "--kms-key", "acme/k", "--kms-socket-group",
              "no-such-group-here"], "--kms-socket-group: no group named no-such-group-here"),
            (["--kms-socket", "/tmp/" + "d" * 120 + "/kms.sock", "--kms-key", "acme/k"],
             "is too long for a unix socket"),
        ]:
            server = Server(extra_args=args)
            with self.assertRaises(RuntimeError) as failed:
                server.start()
            self.assertIn(message, str(failed.exception), args)


if __name__ == "__main__":
    unittest.main(verbosity=2)
