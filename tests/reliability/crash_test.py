"""Crash safety: admin writers keep changing the keystore (CreateTenant, CreateKey,
RotateKey, IssueToken, RevokeToken, DeleteTenant) while the server is killed with
SIGKILL at a random moment, many times. After every restart the keystore loads, every
change acknowledged before the kill is there (one in flight may or may not be), and
data sealed under acknowledged key versions still opens. SEALBOX_CRASH_KILLS sets the
number of kills (default 50)."""
import glob
import os
import random
import sys
import threading
import time
import unittest

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reliability import (  # noqa: E402
    AdminClient, CryptoClient, Server, admin_pb2, kill)

KILLS = int(os.environ.get("SEALBOX_CRASH_KILLS", "50"))
WRITERS = 3


class Acked:
    """What one writer was told succeeded. Each writer changes only its own tenants,
    so its record is exact but for the one call in flight at a kill."""

    def __init__(self):
        # tenant -> {"token": str or None, "token_id": its id, "tokens": set of ids
        #            (live, acknowledged),
        #            "keys": {key: highest acknowledged primary version}}
        self.tenants = {}
        self.deleted = set()  # deletions acknowledged
        self.canaries = []    # (tenant, key, version, ciphertext, plaintext)


class Writer(threading.Thread):
    def __init__(self, index, server, stop, rng):
        super().__init__(daemon=True)
        self.index, self.server, self.stop, self.rng = index, server, stop, rng
        self.acked = Acked()
        self.serial = 0
        self.calls = self.acks = 0
        self.unexpected = []      # errors that were not the kill
        self.cut_by_kill = 0      # calls that failed because the server was gone
        self.kill_time = None     # set by the test just before the kill

    def fresh(self, prefix):
        self.serial += 1
        return f"{prefix}{self.index}-{self.serial}"

    def run(self):
        self.admin = AdminClient(self.server)
        self.crypto = CryptoClient(self.server.address)
        try:
            while not self.stop.is_set():
                try:
                    self.one_change()
                except grpc.RpcError as error:
                    killed = self.kill_time is not None
                    if error.code() == grpc.StatusCode.UNAVAILABLE and killed:
                        self.cut_by_kill += 1
                        return
                    self.unexpected.append(f"{error.code()}: {error.details()}")
                    return
        finally:
            self.admin.close()
            self.crypto.close()

    def one_change(self):
        a, t = self.admin, self.acked.tenants
        live = [name for name, tenant in t.items() if tenant["token"]]
        choice = self.rng.random()
        self.calls += 1
        if not live or choice < 0.12:
            name = self.fresh("w")
            a.CreateTenant(admin_pb2.CreateTenantRequest(name=name))
            t[name] = {"token": None, "tokens": set(), "keys": {}}
            issued = a.IssueToken(admin_pb2.IssueTokenRequest(tenant=name))
            t[name]["token"], t[name]["token_id"] = issued.token, issued.info.id
            t[name]["tokens"].add(issued.info.id)
        elif choice < 0.30:
            name = self.rng.choice(live)
            key = self.fresh("k")
            made = a.CreateKey(admin_pb2.CreateKeyRequest(tenant=name, key=key))
            t[name]["keys"][key] = made.primary_version
            self.canary(name, key)
        elif choice < 0.70:
            name = self.rng.choice(live)
            if not t[name]["keys"]:
                return
            key = self.rng.choice(sorted(t[name]["keys"]))
            rotated = a.RotateKey(admin_pb2.KeyRef(tenant=name, key=key))
            t[name]["keys"][key] = max(t[name]["keys"][key], rotated.primary_version)
            self.canary(name, key)
        elif choice < 0.85:
            name = self.rng.choice(live)
            issued = a.IssueToken(admin_pb2.IssueTokenRequest(tenant=name, description="x"))
            t[name]["tokens"].add(issued.info.id)
        elif choice < 0.95:
            name = self.rng.choice(live)
            extra = sorted(t[name]["tokens"] - {t[name]["token_id"]})  # canaries use it
            if not extra:
                return
            token_id = self.rng.choice(extra)
            t[name]["tokens"].discard(token_id)  # in flight: may or may not be revoked
            a.RevokeToken(admin_pb2.RevokeTokenRequest(tenant=name, token_id=token_id))
        elif len(live) > 2:
            name = self.rng.choice(live)
            del t[name]  # in flight: may or may not be deleted
            self.acked.canaries = [c for c in self.acked.canaries if c[0] != name]
            a.DeleteTenant(admin_pb2.DeleteTenantRequest(name=name))
            self.acked.deleted.add(name)
        self.acks += 1

    def canary(self, tenant, key):
        """Seals a little data under the version just acknowledged (or a later one)."""
        plaintext = os.urandom(32)
        sealed = self.crypto.seal(key, plaintext, token=self.acked.tenants[tenant]["token"])
        self.acked.canaries.append((tenant, key, sealed.key_version, sealed.ciphertext,
                                    plaintext))


class CrashSafety(unittest.TestCase):
    def test_kill_9_during_admin_writes(self):
        rng = random.Random(int(os.environ.get("SEALBOX_CRASH_SEED", time.time_ns())))
        server = Server()
        writers = [Writer(i, server, None, rng) for i in range(WRITERS)]
        checked = {"tenants": 0, "keys": 0, "tokens": 0, "canaries": 0}
        acks = calls = cut = 0
        started = time.time()
        try:
            server.start()
            for round_ in range(KILLS):
                stop = threading.Event()
                for w in writers:
                    w.stop, w.kill_time = stop, None
                running = []
                for w in writers:  # a fresh thread per round, keeping each writer's record
                    thread = Writer(w.index, server, stop, w.rng)
                    thread.acked, thread.serial = w.acked, w.serial
                    running.append(thread)
                    thread.start()
                time.sleep(rng.uniform(0.05, 0.6))
                for w in running:
                    w.kill_time = time.time()
                kill(server)
                stop.set()
                for w in running:
                    w.join(timeout=60)
                    self.assertFalse(w.is_alive(), "a writer did not stop after the kill")
                    self.assertEqual(w.unexpected, [], f"round {round_}: unexpected errors")
                    acks, calls, cut = acks + w.acks, calls + w.calls, cut + w.cut_by_kill
                writers = running

                server.start()  # raises, with the server's output, if it cannot load
                self.verify(server, writers, checked)
            # Writers killed before their rename leave keystore.sbx.tmp.<pid>; the next
            # write removes them (durable_file.cc), so after one more there are none.
            temp_files = glob.glob(os.path.join(server.data_dir, "keystore.sbx.tmp.*"))
            admin = AdminClient(server)
            admin.CreateTenant(admin_pb2.CreateTenantRequest(name="after-the-kills"))
            admin.close()
            left = glob.glob(os.path.join(server.data_dir, "keystore.sbx.tmp.*"))
            self.assertEqual(left, [], "stale temp files survived a write")
            print(f"crash safety: {KILLS} SIGKILLs in {time.time() - started:.0f} s, "
                  f"{WRITERS} admin writers; {calls} admin changes attempted, {acks} "
                  f"acknowledged, {cut} cut off by a kill while in flight; after every "
                  f"restart the keystore loaded and all acknowledged changes were there "
                  f"(last check: {checked['tenants']} tenants, {checked['keys']} keys, "
                  f"{checked['tokens']} token ids, {checked['canaries']} canaries opened); "
                  f"temp files of killed writes: {len(temp_files)} before the next write, "
                  f"{len(left)} after it")
            self.assertGreater(cut, 0, "no kill ever hit an admin call in flight")
        finally:
            kill(server)

    def verify(self, server, writers, checked):
        admin, crypto = AdminClient(server), CryptoClient(server.address)
        try:
            listed = {t.name: t for t in admin.ListTenants(
                admin_pb2.ListTenantsRequest()).tenants}
            counts = {"tenants": 0, "keys": 0, "tokens": 0, "canaries": 0}
            for w in writers:
                for name in w.acked.deleted:
                    self.assertNotIn(name, listed, f"deleted tenant {name} came back")
                for name, tenant in w.acked.tenants.items():
                    self.assertIn(name, listed, f"acknowledged tenant {name} lost")
                    ids = {info.id for info in listed[name].tokens}
                    self.assertLessEqual(tenant["tokens"], ids,
                                         f"acknowledged token of {name} lost")
                    counts["tenants"] += 1
                    counts["tokens"] += len(tenant["tokens"])
                    keys = {k.name: k for k in admin.ListKeys(
                        admin_pb2.ListKeysRequest(tenant=name)).keys}
                    for key, version in tenant["keys"].items():
                        self.assertIn(key, keys, f"acknowledged key {name}/{key} lost")
                        got = keys[key]
                        self.assertGreaterEqual(got.primary_version, version,
                                                f"rotation of {name}/{key} lost")
                        self.assertEqual([v.version for v in got.versions],
                                         list(range(1, got.primary_version + 1)))
                        counts["keys"] += 1
                for name, key, version, ciphertext, plaintext in w.acked.canaries:
                    token = w.acked.tenants[name]["token"]
                    self.assertEqual(crypto.open(key, ciphertext, token=token), plaintext,
                                     f"canary sealed under {name}/{key} v{version}")
                    counts["canaries"] += 1
            checked.update(counts)
        finally:
            admin.close()
            crypto.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
