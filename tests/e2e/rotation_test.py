"""Automatic key rotation on three sealbox-server processes sharing one keystore (a
data directory, or etcd under the etcd tier): with a 2 s rotation period, the key is
rotated once per period, never twice, whichever replica gets there first."""
import calendar
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (run_operations_doc, start_replicas, unary_key_version,  # noqa: E402
                     wait_for)

PERIOD = 2  # seconds


class AutomaticRotation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.replicas = start_replicas(3, ["--min-rotation-period-seconds", str(PERIOD)])
        cls.token = cls.replicas[0].new_tenant("acme", key="rotating")

    @classmethod
    def tearDownClass(cls):
        for server in cls.replicas:
            server.stop()

    def key(self, server):
        return json.loads(server.admin("--json", "key", "get", "acme", "rotating").stdout)

    def test_three_replicas_rotate_once_per_period(self):
        a = self.replicas[0]
        # Refused below the server's minimum, and shown once set.
        low = a.admin("key", "rotation-period", "acme", "rotating", "1s", check=False)
        self.assertEqual(low.returncode, 1, low.stderr)
        self.assertIn("--min-rotation-period", low.stderr.decode())
        shown = a.admin("key", "rotation-period", "acme", "rotating", f"{PERIOD}s")
        self.assertIn(f"rotates every {PERIOD}s, next ", shown.stdout.decode())
        start = time.time()
        # Four rotations (about four periods), then stop rotating and let every replica
        # catch up with the last one.
        wait_for(lambda: self.key(a)["primary_version"] >= 5, "four rotations",
                 seconds=4 * PERIOD + 20)
        stopping = time.time()
        a.admin("key", "rotation-period", "acme", "rotating", "off")
        final = self.key(a)
        last = final["primary_version"]
        for server in self.replicas:
            wait_for(lambda: self.key(server)["primary_version"] == last,
                     "every replica has every rotation")
        versions = final["versions"]
        created = [calendar.timegm(time.strptime(v["create_time"], "%Y-%m-%dT%H:%M:%SZ"))
                   for v in versions]
        gaps = [b - c for c, b in zip(created, created[1:])]
        # Exactly one rotation per period: never two within a period of each other...
        self.assertTrue(all(gap >= PERIOD for gap in gaps), gaps)
        # ...and none missed: each lands within a check interval (0.1 s) of when it was
        # due; creation times are whole seconds, and a busy machine may take a second or
        # two more. The first was due a period after v1, or at once if that had passed
        # when the period was set; the last one due before the rotation stopped is there.
        due = [max(created[0] + PERIOD, int(start))] + [c + PERIOD for c in created[1:]]
        late = [c - d for c, d in zip(created[1:], due)]
        self.assertTrue(all(lateness <= 2 for lateness in late), (gaps, late))
        self.assertLessEqual(int(stopping) - due[-1], 2, (gaps, late))
        self.assertGreaterEqual(len(versions) - 1, 4, gaps)
        # Each replica seals under the newest version; all of them rotated some.
        for server in self.replicas:
            sealed = server.cli("seal", "--key", "rotating", token=self.token, input=b"x")
            self.assertEqual(unary_key_version(sealed.stdout), last)
        rotated_by = [server.output().count('"event":"key_rotated"') for server in self.replicas]
        self.assertEqual(sum(rotated_by), len(versions) - 1, rotated_by)
        self.assertNotIn("next ", a.admin("key", "get", "acme", "rotating").stdout.decode())

    def test_operations_doc_rotation_commands(self):
        a = self.replicas[0]
        a.admin("key", "create", "acme", "default")
        result = run_operations_doc("### Rotating on a schedule", a)
        self.assertIn(b"rotates every 90d, next ", result.stdout)
        self.assertNotIn(b"rotates every", a.admin("key", "get", "acme", "default").stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
