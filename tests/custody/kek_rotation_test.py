"""KEK rotation while serving, end to end: the real sealbox-server with its KEK sealed
by a real HSM (SoftHSM2), on a real etcd shared by two replicas, rotated under load,
killed with SIGKILL halfway through the rewrap, and on a schedule."""
import base64
import json
import os
import re
import signal
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
import harness  # noqa: E402
from harness import (AdminClient, CryptoClient, Server, SoftHsm, proto_fields,  # noqa: E402
                     wait_for)


def etcd_records(etcd, prefix):
    """{etcd key: value} under `prefix`, from etcdctl's JSON (values in base64)."""
    out = json.loads(etcd.etcdctl("get", "--prefix", prefix, "-w", "json"))
    return {base64.b64decode(kv["key"]).decode(): base64.b64decode(kv.get("value", ""))
            for kv in out.get("kvs", [])}


def record_fingerprints(records, prefix):
    """The KEK fingerprint (hex) in each keystore record's header (docs/FORMAT.md:
    "SBXR", version, then 16 bytes of fingerprint), by etcd key."""
    return {key: value[5:21].hex() for key, value in records.items()
            if value.startswith(b"SBXR")}


def status(admin):
    return admin.GetKekStatus(harness.admin_pb2.GetKekStatusRequest())


class Load:
    """Seal and Open against each server from a few threads, and key creations (admin
    writes) against the last one, until stopped; counts every call and failure."""

    def __init__(self, servers, token, tenant):
        self.stop = threading.Event()
        self.calls = 0
        self.failures = []
        self.created = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.crypto, args=(s, token)) for s in servers
                        for _ in range(2)]
        self.threads.append(threading.Thread(target=self.admin, args=(servers[-1], tenant)))
        for thread in self.threads:
            thread.start()

    def count(self, error=None):
        with self.lock:
            self.calls += 1
            if error is not None:
                self.failures.append(error)

    def crypto(self, server, token):
        client = CryptoClient(server.address, token)
        while not self.stop.is_set():
            try:
                plaintext = os.urandom(64)
                sealed = client.seal("default", plaintext).ciphertext
                self.count()
                self.count(None if client.open("default", sealed) == plaintext else "mismatch")
            except Exception as e:  # every failure is reported by the test
                self.count(repr(e))
        client.close()

    def admin(self, server, tenant):
        admin = AdminClient(server)
        i = 0
        while not self.stop.is_set():
            name = f"during-{i}"
            try:
                admin.CreateKey(harness.admin_pb2.CreateKeyRequest(tenant=tenant, key=name))
                self.created.append(name)
                self.count()
            except Exception as e:
                self.count(repr(e))
            i += 1
            time.sleep(0.02)
        admin.close()

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join()


def make_keys(admin, tenant, count):
    for i in range(count):
        admin.CreateKey(harness.admin_pb2.CreateKeyRequest(tenant=tenant, key=f"k{i}"))


class KekRotationTest(unittest.TestCase):
    def setUp(self):
        self.hsm = SoftHsm()
        self.hsm.make_key("sealbox-root")

    def etcd_replicas(self, count, extra_args=()):
        self.etcd = harness.Etcd().start()
        self.addCleanup(self.etcd.close)
        self.prefix = "/rotation-" + os.urandom(4).hex() + "/"
        return [Server(hsm=self.hsm, etcd=self.etcd, prefix=self.prefix,
                       admin_token="rotation-admin-token",
                       extra_args=["--hsm-check-seconds", "1"] + list(extra_args)).start()
                for _ in range(count)]

    def test_rotation_under_load_on_two_replicas_fails_no_call(self):
        one, two = self.etcd_replicas(2, ["--kek-rewrap-rate", "400"])
        admin_one, admin_two = AdminClient(one), AdminClient(two)
        token = harness.new_tenant(admin_one, "acme")
        make_keys(admin_one, "acme", 300)
        before = CryptoClient(one.address, token).seal("default", b"sealed before").ciphertext
        old = status(admin_one).fingerprint

        load = Load([one, two], token, "acme")
        try:
            time.sleep(0.5)
            started = admin_one.RotateKek(harness.admin_pb2.RotateKekRequest())
            new = started.fingerprint
            self.assertNotEqual(new, old)
            self.assertEqual(started.previous_keks, 1)
            # Replica two follows without a restart: the new KEK on its next read.
            wait_for(lambda: status(admin_two).fingerprint == new, "replica two sees the new KEK")
            wait_for(lambda: status(admin_one).previous_keks == 0, "the rotation finished", 60)
            time.sleep(0.5)
        finally:
            load.finish()
        self.assertEqual(load.failures, [])
        self.assertGreater(load.calls, 100)
        self.assertGreater(len(load.created), 5)

        # Every record, those written during the rotation included, is under the new KEK.
        records = etcd_records(self.etcd, self.prefix)
        fingerprints = record_fingerprints(records, self.prefix)
        self.assertGreater(len(fingerprints), 300)
        self.assertEqual(set(fingerprints.values()), {new})
        # The sealed KEK lists no KEK but the new one.
        sealed = proto_fields(records[self.prefix + "kek"])
        self.assertNotIn(3, sealed)
        self.assertEqual(proto_fields(sealed[2])[1].hex(), new)
        for server in (one, two):
            client = CryptoClient(server.address, token)
            self.assertEqual(client.open("default", before), b"sealed before")
            keys = AdminClient(server).ListKeys(harness.admin_pb2.ListKeysRequest(tenant="acme"))
            self.assertEqual(len(keys.keys), 301 + len(load.created))
        # Started on replica one; whichever replica's rewrap ended first retired the
        # old KEK (the other's rewrap, found nothing left to do, says nothing).
        self.assertEqual(one.output().count('"event":"kek_rotation_started"'), 1)
        self.assertEqual(two.output().count('"event":"kek_rotation_started"'), 0)
        self.assertEqual(sum(s.output().count('"event":"kek_rotation_finished"')
                             for s in (one, two)), 1)

    def test_a_kill_halfway_through_the_rewrap_loses_nothing(self):
        (server,) = self.etcd_replicas(1, ["--kek-rewrap-rate", "150"])
        admin = AdminClient(server)
        token = harness.new_tenant(admin, "acme")
        make_keys(admin, "acme", 400)
        before = CryptoClient(server.address, token).seal("default", b"before the kill").ciphertext
        old = status(admin).fingerprint
        new = admin.RotateKek(harness.admin_pb2.RotateKekRequest()).fingerprint
        wait_for(lambda: status(admin).records_rewrapped >= 100, "100 records rewrapped")
        server.stop(sig=signal.SIGKILL)

        # Halfway: some records under each KEK, and the sealed KEK still lists both.
        records = etcd_records(self.etcd, self.prefix)
        under = set(record_fingerprints(records, self.prefix).values())
        self.assertEqual(under, {old, new})
        sealed = proto_fields(records[self.prefix + "kek"])
        self.assertEqual(proto_fields(sealed[2])[1].hex(), new)
        self.assertIn(3, sealed)

        server.start()
        admin = AdminClient(server)
        wait_for(lambda: status(admin).previous_keks == 0, "the rewrap finished after restart", 60)
        records = etcd_records(self.etcd, self.prefix)
        self.assertEqual(set(record_fingerprints(records, self.prefix).values()), {new})
        keys = admin.ListKeys(harness.admin_pb2.ListKeysRequest(tenant="acme"))
        self.assertEqual(len(keys.keys), 401)
        self.assertEqual(CryptoClient(server.address, token).open("default", before),
                         b"before the kill")
        self.assertEqual(status(admin).fingerprint, new)

    def test_a_schedule_rotates_the_kek_on_a_data_directory(self):
        audit = os.path.join(self.hsm.home, "audit.log")
        server = Server(hsm=self.hsm, extra_args=[
            "--kek-rotation-period", "3s", "--min-rotation-period-seconds", "1",
            "--hsm-check-seconds", "1", "--audit", "admin", "--audit-log", audit]).start()
        admin = AdminClient(server)
        token = harness.new_tenant(admin, "acme")
        sealed = CryptoClient(server.address, token).seal("default", b"scheduled").ciphertext
        first = status(admin)
        self.assertEqual(first.next_rotation_time.seconds, first.create_time.seconds + 3)
        wait_for(lambda: status(admin).fingerprint != first.fingerprint, "a scheduled rotation", 30)
        wait_for(lambda: status(admin).previous_keks == 0, "the rotation finished")
        with open(os.path.join(server.data_dir, "keystore.sbx"), "rb") as f:
            header = f.read(64)
        # The file may already be under an even newer KEK: a 3 s period keeps rotating.
        self.assertNotEqual(header[20:36].hex(), first.fingerprint)
        self.assertEqual(CryptoClient(server.address, token).open("default", sealed),
                         b"scheduled")
        server.stop()
        with open(audit) as f:
            methods = re.findall(r'"service":"sealbox.custody","method":"(\w+)"', f.read())
        self.assertIn("KekRotationStarted", methods)
        self.assertIn("KekRotationFinished", methods)

    def test_without_an_hsm_the_kek_is_not_rotated_while_serving(self):
        server = Server().start()
        admin = AdminClient(server)
        import grpc
        with self.assertRaises(grpc.RpcError) as refused:
            admin.RotateKek(harness.admin_pb2.RotateKekRequest())
        self.assertEqual(refused.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("--previous-kek-file and a restart", refused.exception.details())
        server.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
