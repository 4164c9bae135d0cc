"""Runs docs/OPERATIONS.md's etcd walkthroughs as written (the first ```sh block under
a heading), with their fixed ports (etcd's implicit peer port too) swapped for free
ones, the binaries on PATH and a fresh working directory:

  - "### The keystore on etcd": it must end by printing the opened "hello", the
    tenant, key and token made through one replica used through the other at once;
  - "### When a replica cannot reach etcd": replica B, cut from etcd by killing its
    relay, still opens with a token revoked through A within the bound, then refuses
    everything as stale with its health NOT_SERVING, and once the relay is back
    refuses the revoked token by itself and serves again."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
from harness import free_ports  # noqa: E402

DOC = "docs/OPERATIONS.md"


def block(heading):
    with open(DOC) as f:
        doc = f.read()
    section = doc.split(heading, 1)[1]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def run_block(test, heading, ports, seconds=120):
    """Runs the block with `ports` swapped for free ones: (stdout, stderr)."""
    script = block(heading)
    frees = free_ports(len(ports) + 1)
    for port, free in zip(ports, frees):
        test.assertIn(port, script)
        script = script.replace(port, str(free))
    # And etcd's peer port, 2380 unless told: another etcd on this machine may hold it.
    peer = f"http://127.0.0.1:{frees[-1]}"
    test.assertEqual(script.count("etcd --data-dir "), 1, script)
    script = script.replace("etcd --data-dir ", (
        f"etcd --listen-peer-urls {peer} --initial-advertise-peer-urls {peer} "
        f"--initial-cluster default={peer} --data-dir "))
    work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    script = script.replace("/tmp/sealbox-etcd", os.path.join(work, "etcd"))
    script = script.replace("/tmp/etcd.log", os.path.join(work, "etcd.log"))
    bin_dir = os.path.join(work, "bin")
    os.mkdir(bin_dir)
    for name, target in (("sealbox-server", "server/sealbox-server"),
                         ("sealbox", "client/sealbox")):
        os.symlink(os.path.abspath(target), os.path.join(bin_dir, name))
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin")
    env.pop("SEALBOX_TOKEN", None)
    # Files, not pipes: the servers it leaves running hold them open.
    with open(os.path.join(work, "out"), "w+") as out, \
            open(os.path.join(work, "err"), "w+") as err:
        run = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=work,
                               env=env, stdout=out, stderr=err, start_new_session=True)
        try:
            run.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            pass
        finally:
            os.killpg(run.pid, signal.SIGKILL)  # etcd, relays and servers it started
        out.seek(0)
        err.seek(0)
        printed, errors = out.read(), err.read()
    logs = ""
    for name in sorted(os.listdir(work)):
        if name.endswith(".log"):
            with open(os.path.join(work, name)) as f:
                logs += f"--- {name}\n{f.read()[-2000:]}\n"
    test.assertEqual(run.returncode, 0, f"{errors}\nprinted:\n{printed[-500:]}\n{logs}")
    return printed, errors


class Walkthroughs(unittest.TestCase):
    def test_two_servers_one_etcd(self):
        printed, _ = run_block(self, "### The keystore on etcd", ("2379", "50061", "50062"))
        self.assertTrue(printed.endswith("hello\n"), printed)
        self.assertIn("SERVING", printed)

    def test_a_replica_cut_from_etcd(self):
        printed, errors = run_block(self, "### When a replica cannot reach etcd",
                                    ("23900", "2379", "50061", "50062"))
        # A refuses the revoked token at once; B, cut off, opens with it (within the
        # bound), then refuses everything as stale, NOT_SERVING; healed, it refuses
        # the revoked token and serves.
        self.assertIn("UNAUTHENTICATED: invalid or revoked token", errors)
        self.assertIn("hello\n", printed)
        stale = re.search(r"open: UNAVAILABLE: this replica's keystore is stale: .*"
                          r"\((\d+(?:\.\d+)?)s ago\), longer ago than --max-staleness=5s",
                          errors)
        self.assertIsNotNone(stale, errors)
        # Counted from B's last proof, just before the cut: the `sleep 5` and the four
        # CLI calls around it (up to a second or so each on a busy machine).
        self.assertLess(float(stale.group(1)), 8.0)
        self.assertIn("the server is NOT_SERVING", errors)
        # `health --alive` printed NOT_SERVING too, and exited 0 (the block runs -e).
        self.assertGreaterEqual(printed.count("NOT_SERVING\n"), 2, printed)
        healed = re.search(r"revoked on B (\d+) ms after the relay came back", printed)
        self.assertIsNotNone(healed, printed)
        # socat's start and a CLI per try, slow on a busy machine; more would mean B
        # waits out gRPC's reconnect backoff (seconds, after a cut this long).
        self.assertLess(int(healed.group(1)), 3000, printed)
        # Health SERVING again (after any NOT_SERVING it said before it looked again).
        self.assertEqual(printed.splitlines()[-1], "SERVING", printed)
        print(f"healed: {healed.group(0)}; stale: {stale.group(0)[-60:]}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
