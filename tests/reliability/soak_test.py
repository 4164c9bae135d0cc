"""Soak: the real server under many concurrent clients (the C++ `soak` client) mixing
Seal, Open, Rewrap, SealStream and OpenStream over 20 tenants x 3 keys, while keys are
rotated through it and through a second server on the same data directory or etcd
prefix (so the loaded server keeps taking in the other's changes). No unexpected error, every kept sample
opens, during the run, after it and after a restart, and the server's VmRSS stays
flat. SEALBOX_SOAK_SECONDS sets the load phase's length (default 60)."""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reliability import AdminClient, Server, admin_pb2, kill  # noqa: E402
from harness import ETCD_BACKEND  # noqa: E402

SOAK = os.path.abspath("tests/reliability/soak")
SECONDS = float(os.environ.get("SEALBOX_SOAK_SECONDS", "60"))


def run_soak(*args, timeout):
    result = subprocess.run([SOAK, *args], capture_output=True, text=True, timeout=timeout)
    print(result.stdout, end="")
    print(result.stderr, end="", file=sys.stderr)
    return result


def primaries(server):
    """{(tenant, key): primary version} as `server` sees them."""
    admin = AdminClient(server)
    try:
        return {(t.name, k.name): k.primary_version
                for t in admin.ListTenants(admin_pb2.ListTenantsRequest()).tenants
                for k in admin.ListKeys(admin_pb2.ListKeysRequest(tenant=t.name)).keys}
    finally:
        admin.close()


class Soak(unittest.TestCase):
    def test_load_with_rotations_and_reloads(self):
        kek = os.urandom(32)
        loaded = Server(kek=kek)
        writer = Server(data_dir=loaded.data_dir, kek=kek, admin_token=loaded.admin_token)
        try:
            loaded.start()
            writer.start()
            samples = os.path.join(loaded.home, "samples")
            run = run_soak("--server", loaded.address,
                           # Two rotations in three through the other server,
                           # which the loaded one then reloads.
                           "--admin_servers",
                           f"{loaded.address},{writer.address},{writer.address}",
                           "--admin_token_file", loaded.admin_token_file,
                           "--server_pid", str(loaded.process.pid),
                           "--seconds", str(SECONDS), "--samples_file", samples,
                           timeout=2 * SECONDS + 300)
            self.assertEqual(run.returncode, 0, "the soak run failed (output above)")
            self.assertIn("soak: PASS", run.stdout)
            if ETCD_BACKEND:
                # etcd: changes arrive by watch, not by reloading; both servers must
                # end with the same keys.
                self.assertEqual(primaries(loaded), primaries(writer))
            else:
                reloads = loaded.output().count('"event":"keystore_reloaded"')
                print(f"keystore reloads by the loaded server during the run: {reloads}")
                self.assertGreater(reloads, 0, "the second server's writes were never reloaded")
            self.assertNotIn("keystore_reload_failed", loaded.output())

            self.assertEqual(loaded.stop(), 0, "SIGTERM after the run: not a clean exit")
            loaded.start()
            again = run_soak("--server", loaded.address, "--verify_samples", samples,
                             timeout=300)
            self.assertEqual(again.returncode, 0, "samples did not all open after a restart")
        finally:
            kill(loaded)
            kill(writer)


if __name__ == "__main__":
    unittest.main(verbosity=2)
