"""Disk full: the data directory on a small tmpfs that fills up while an admin writer
rotates keys, then is kept full while every kind of admin write is tried. The client
gets an error that says there is no space; the server keeps serving the last keystore
it wrote; the file on disk is intact and loads after a restart; once space is freed,
writes work again and nothing acknowledged was lost. Needs root to mount (skips,
saying why, without it)."""
import errno
import glob
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reliability import (  # noqa: E402
    AdminClient, CryptoClient, Server, admin_pb2, kill, new_tenant)

TMPFS_BYTES = 256 << 10


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def fill(directory, name, block):
    """Writes `block`-sized pieces to directory/name until ENOSPC; returns the bytes."""
    written = 0
    with open(os.path.join(directory, name), "ab", buffering=0) as f:
        while True:
            try:
                written += f.write(b"\0" * block)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                return written


def no_space(error):
    return "no space left on device" in (error.details() or "").lower()


@unittest.skipIf(os.geteuid() != 0,
                 "SKIPPED: disk-full test needs root to mount a tmpfs (run it as root, "
                 "as tools/dev test and Bazel here do)")
class DiskFull(unittest.TestCase):
    def setUp(self):
        self.mount = tempfile.mkdtemp(prefix="sealbox-full-", dir=os.environ.get("TEST_TMPDIR"))
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES},mode=0700",
                                  "tmpfs", self.mount], capture_output=True, text=True)
        if mounted.returncode != 0:
            self.skipTest(f"SKIPPED: cannot mount a tmpfs: {mounted.stderr.strip()}")
        self.addCleanup(lambda: subprocess.run(["umount", "-l", self.mount], check=False))

    def test_full_disk_under_admin_writes(self):
        server = Server(data_dir=os.path.join(self.mount, "data"))
        self.addCleanup(kill, server)
        server.start()
        admin = AdminClient(server)
        self.addCleanup(admin.close)
        token = new_tenant(admin, "acme", keys=("default", "other"))
        crypto = CryptoClient(server.address, token)
        self.addCleanup(crypto.close)
        before = crypto.seal("default", b"sealed before the disk filled")
        keystore = os.path.join(server.data_dir, "keystore.sbx")

        # 1. The disk fills while a writer rotates "default" as fast as it can.
        acked, failures, stop = [0], [], threading.Event()

        def rotate():
            while not stop.is_set() and len(failures) < 5:
                try:
                    key = admin.RotateKey(admin_pb2.KeyRef(tenant="acme", key="default"))
                    acked[0] = max(acked[0], key.primary_version)
                except grpc.RpcError as error:
                    failures.append(error)

        writer = threading.Thread(target=rotate, daemon=True)
        writer.start()
        filled = 0
        deadline = time.time() + 60
        while not failures and time.time() < deadline:
            time.sleep(0.01)
            try:
                with open(os.path.join(self.mount, "filler"), "ab", buffering=0) as f:
                    f.write(b"\0" * 4096)
                    filled += 4096
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                filled += fill(self.mount, "filler", 512) + fill(self.mount, "filler2", 1)
        stop.set()
        writer.join(timeout=60)
        self.assertFalse(writer.is_alive())
        self.assertTrue(failures, "the disk never filled under the writer")
        for error in failures:
            self.assertTrue(no_space(error), f"{error.code()}: {error.details()}")
        print(f"disk full during rotations: {acked[0] - 1} rotations acknowledged, then "
              f"{len(failures)} refused: {failures[0].code()} \"{failures[0].details()}\"")

        # 2. Completely full now: every kind of write is refused with a clear message.
        fill(self.mount, "filler2", 1)
        digest = sha256(keystore)
        primary = admin.GetKey(admin_pb2.KeyRef(tenant="acme", key="default")).primary_version
        self.assertGreaterEqual(primary, acked[0])
        writes = {
            "CreateTenant": lambda: admin.CreateTenant(admin_pb2.CreateTenantRequest(name="new")),
            "CreateKey": lambda: admin.CreateKey(admin_pb2.CreateKeyRequest(tenant="acme",
                                                                            key="new")),
            "RotateKey": lambda: admin.RotateKey(admin_pb2.KeyRef(tenant="acme", key="other")),
            "IssueToken": lambda: admin.IssueToken(admin_pb2.IssueTokenRequest(tenant="acme")),
        }
        for method, call in writes.items():
            with self.assertRaises(grpc.RpcError, msg=method) as refused:
                call()
            self.assertTrue(no_space(refused.exception),
                            f"{method}: {refused.exception.details()}")
            self.assertEqual(refused.exception.code(), grpc.StatusCode.INTERNAL)
        print(f"full disk: {', '.join(writes)} each refused with INTERNAL "
              f"\"{refused.exception.details()}\"")

        # 3. Still serving the last keystore it wrote; the file unchanged, no temp left.
        self.assertEqual(crypto.open("default", before.ciphertext),
                         b"sealed before the disk filled")
        now = crypto.seal("default", b"sealed while full")
        self.assertEqual(now.key_version, primary)
        self.assertEqual(crypto.open("default", now.ciphertext), b"sealed while full")
        self.assertNotIn("new", [t.name for t in admin.ListTenants(
            admin_pb2.ListTenantsRequest()).tenants])
        self.assertEqual(sha256(keystore), digest)
        self.assertEqual(glob.glob(keystore + ".tmp.*"), [])

        # 4. A restart while still full loads the file as it was.
        self.assertEqual(server.stop(), 0)
        server.start()
        admin, crypto = self.reconnect(server, token)
        self.assertEqual(admin.GetKey(admin_pb2.KeyRef(tenant="acme", key="default"))
                         .primary_version, primary)
        self.assertEqual(crypto.open("default", now.ciphertext), b"sealed while full")

        # 5. Space freed: writes work again, and survive a restart.
        os.remove(os.path.join(self.mount, "filler"))
        os.remove(os.path.join(self.mount, "filler2"))
        rotated = admin.RotateKey(admin_pb2.KeyRef(tenant="acme", key="default"))
        self.assertEqual(rotated.primary_version, primary + 1)
        admin.CreateTenant(admin_pb2.CreateTenantRequest(name="after"))
        self.assertEqual(server.stop(), 0)
        server.start()
        admin, crypto = self.reconnect(server, token)
        self.assertEqual(admin.GetKey(admin_pb2.KeyRef(tenant="acme", key="default"))
                         .primary_version, primary + 1)
        self.assertIn("after", [t.name for t in admin.ListTenants(
            admin_pb2.ListTenantsRequest()).tenants])
        self.assertEqual(crypto.open("default", before.ciphertext),
                         b"sealed before the disk filled")
        print(f"tmpfs of {TMPFS_BYTES >> 10} KiB ({filled >> 10} KiB of filler): old keystore "
              f"served and kept (sha256 unchanged), restart while full loaded it, writes "
              f"worked again after freeing space; acknowledged rotations lost: 0")

    def reconnect(self, server, token):
        admin, crypto = AdminClient(server), CryptoClient(server.address, token)
        self.addCleanup(admin.close)
        self.addCleanup(crypto.close)
        return admin, crypto


if __name__ == "__main__":
    unittest.main(verbosity=2)
