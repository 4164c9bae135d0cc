"""Two sealbox-server processes sharing one data directory, as replicas sharing one
keystore volume do (deploy/kubernetes): admin changes taken through both at once are
all kept, a change made through one is served by the other after its reload, and
whatever either seals the other opens."""
import json
import os
import shutil
import sys
import unittest
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The servers poll the keystore file every second; wait_for's 20 s allow for a slow
# machine (and QEMU).
from harness import Server, unary_key_version, wait_for  # noqa: E402


class SharedKeystore(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        kek = os.urandom(32)
        cls.a = Server(kek=kek).start()
        cls.b = Server(data_dir=cls.a.data_dir, kek=kek).start()
        cls.replicas = (cls.a, cls.b)
        cls.token = cls.a.new_tenant("shared")
        wait_for(lambda: cls.tenants(cls.b) >= {"shared"}, "replica b sees tenant shared")

    @classmethod
    def tearDownClass(cls):
        for server in cls.replicas:
            server.stop()

    @staticmethod
    def tenants(server):
        listed = json.loads(server.admin("--json", "tenant", "list").stdout or b"{}")
        return {t["name"] for t in listed.get("tenants", [])}

    @staticmethod
    def key(server, tenant, name):
        """The key as `admin key get --json` shows it; None until the server has it."""
        got = server.admin("--json", "key", "get", tenant, name, check=False)
        return json.loads(got.stdout) if got.returncode == 0 else None

    def seal_version(self, server, key):
        """The key version a fresh seal through `server` uses; None if it cannot seal."""
        sealed = server.cli("seal", "--key", key, token=self.token, input=b"x", check=False)
        return unary_key_version(sealed.stdout) if sealed.returncode == 0 else None

    def test_concurrent_admin_changes_through_both_are_all_kept(self):
        # 24 new tenants and 16 rotations of one key, half through each replica, 8 at a
        # time: every write reads the file under the lock before changing it.
        self.a.admin("key", "create", "shared", "busy")
        calls = []
        for i in range(24):
            calls.append((self.replicas[i % 2], ("tenant", "create", f"burst-{i}")))
        for i in range(16):
            calls.append((self.replicas[i % 2], ("key", "rotate", "shared", "busy")))
        with ThreadPoolExecutor(max_workers=8) as pool:
            for result in pool.map(lambda call: call[0].admin(*call[1]), calls):
                self.assertEqual(result.returncode, 0)

        expected = {f"burst-{i}" for i in range(24)}
        for server in self.replicas:
            wait_for(lambda: self.tenants(server) >= expected,
                     f"every tenant listed by {server.address}")
            wait_for(lambda: (self.key(server, "shared", "busy") or {}).get(
                         "primary_version") == 17,
                     f"16 rotations on top of version 1 seen by {server.address}")
            versions = self.key(server, "shared", "busy")["versions"]
            self.assertEqual(sorted(v["version"] for v in versions), list(range(1, 18)))

    def test_rotation_through_one_is_used_by_the_other(self):
        self.a.admin("key", "create", "shared", "rotating")
        before = self.a.cli("seal", "--key", "rotating", token=self.token, input=b"v1").stdout
        self.assertEqual(unary_key_version(before), 1)
        wait_for(lambda: self.seal_version(self.b, "rotating") == 1,
                 "replica b seals under the new key's version 1")
        self.a.admin("key", "rotate", "shared", "rotating")
        # b starts sealing under version 2 once it has reloaded, with no restart.
        wait_for(lambda: self.seal_version(self.b, "rotating") == 2,
                 "replica b seals under the version rotated in through replica a")
        self.assertEqual(self.b.cli("open", "--key", "rotating", token=self.token,
                                    input=before).stdout, b"v1")

    def test_what_either_seals_the_other_opens(self):
        big = os.urandom(3 << 20)  # over 1 MiB: the CLI streams it
        for sealer, opener in ((self.a, self.b), (self.b, self.a)):
            for plaintext in (b"", b"small secret", os.urandom(5000), big):
                sealed = sealer.cli("seal", "--key", "default", "--aad", "ctx",
                                    token=self.token, input=plaintext).stdout
                opened = opener.cli("open", "--key", "default", "--aad", "ctx",
                                    token=self.token, input=sealed).stdout
                self.assertEqual(opened, plaintext)


class SecretMountedKeystore(unittest.TestCase):
    """A replica serving a keystore the way a Kubernetes Secret volume presents it:
    keystore.sbx -> ..data/keystore.sbx, ..data -> a timestamped folder, and an update
    swaps ..data atomically. The replica reloads the new keystore without a restart."""

    def publish(self, source, secret_dir, n):
        folder = f"..2026_12_03_00_00_0{n}"
        os.makedirs(os.path.join(secret_dir, folder))
        shutil.copy(source, os.path.join(secret_dir, folder, "keystore.sbx"))
        os.symlink(folder, os.path.join(secret_dir, "..data_tmp"))
        os.rename(os.path.join(secret_dir, "..data_tmp"), os.path.join(secret_dir, "..data"))

    def test_an_updated_secret_is_served_after_reload(self):
        kek = os.urandom(32)
        writer = Server(kek=kek).start()
        self.addCleanup(writer.stop)
        token = writer.new_tenant("acme")
        source = os.path.join(writer.data_dir, "keystore.sbx")
        secret_dir = os.path.join(writer.home, "secret")
        os.makedirs(secret_dir)
        self.publish(source, secret_dir, 1)
        os.symlink("..data/keystore.sbx", os.path.join(secret_dir, "keystore.sbx"))

        reader = Server(data_dir=secret_dir, kek=kek)
        reader.start()
        self.addCleanup(reader.stop)
        sealed = writer.cli("seal", "--key", "default", token=token, input=b"v1").stdout
        self.assertEqual(reader.cli("open", "--key", "default", token=token,
                                    input=sealed).stdout, b"v1")

        writer.admin("key", "rotate", "acme", "default")
        self.publish(source, secret_dir, 2)

        def reader_seals_under_v2():
            out = reader.cli("seal", "--key", "default", token=token, input=b"x").stdout
            return unary_key_version(out) == 2
        wait_for(reader_seals_under_v2, "the reader serves the rotated key from the new Secret")
        self.assertIn('"event":"keystore_reloaded"', reader.output())


if __name__ == "__main__":
    unittest.main()
