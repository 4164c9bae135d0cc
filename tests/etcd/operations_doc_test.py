"""Runs docs/OPERATIONS.md's etcd quick start (the first ```sh block under "### The
keystore on etcd") as written, with its fixed ports swapped for free ones, the
binaries on PATH and a fresh working directory: it must end by printing the opened
"hello", the tenant, key and token made through one replica used through the other at
once."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
from harness import free_port  # noqa: E402

DOC = "docs/OPERATIONS.md"


def quick_start():
    with open(DOC) as f:
        doc = f.read()
    section = doc.split("### The keystore on etcd", 1)[1]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


class QuickStart(unittest.TestCase):
    def test_the_documented_commands_work(self):
        script = quick_start()
        for port in ("2379", "50061", "50062"):
            self.assertIn(port, script)
            script = script.replace(port, str(free_port()))
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
                run.wait(timeout=120)
            finally:
                os.killpg(run.pid, signal.SIGKILL)  # etcd and the two servers it started
            out.seek(0)
            err.seek(0)
            printed, errors = out.read(), err.read()
        self.assertEqual(run.returncode, 0, errors)
        self.assertTrue(printed.endswith("hello\n"), printed)
        self.assertIn("SERVING", printed)


if __name__ == "__main__":
    unittest.main(verbosity=2)
