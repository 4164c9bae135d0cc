"""End-to-end: the Java client library (client/java) against the real server.

The library and the example client (client/examples/java) come built by
client/examples/java/build.sh (javac and jar against Debian's libgrpc-java,
libprotobuf-java, libnetty-java, ...; not Bazel's Java rules), run once per build by
//client/examples/java:jars; this folder's JavaClientChecks.java is compiled over them:

- every call, checksums both ways (a request damaged after its CRC32C is refused by
  the server, a damaged answer by the client), errors told apart by type, streams,
  files, envelope files, tampering giving DecryptionFailedException (JavaClientChecks);
- the example's commands, and a 100 MiB file through the streams and as an envelope
  file in a JVM held to a 64 MiB heap (-Xmx64m), its peak RSS reported;
- a call retried across a server restart on the same port, and none without retries;
- a token with a 15 s lifetime renewed automatically while calls go on past its expiry;
- the first-call snippet of docs/clients/JAVA.md, compiled and run as the page shows.
"""
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../e2e"))
from harness import (Server, file_sha256, java_classpaths, read_status, wait_for,  # noqa: E402
                     write_random)

JAVA_PAGE = "docs/clients/JAVA.md"
CHECKS = "tests/clients/java/JavaClientChecks.java"
MIB = 1 << 20
BIG = 100 * MIB
HEAP = "-Xmx64m"
JVM = ["-XX:TieredStopAtLevel=1", "-Xshare:auto"]  # faster start for short runs


def javac(classpath, out, *sources):
    os.makedirs(out, exist_ok=True)
    subprocess.run(["javac", "--release", "17", "-d", out, "-cp", classpath, *sources],
                   check=True, timeout=300)


class JavaClient(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="sealbox-java-", dir=os.environ.get("TEST_TMPDIR"))
        cls.classpath, cls.example_classpath = java_classpaths()
        cls.checks = os.path.join(cls.home, "checks")
        javac(cls.classpath, cls.checks, CHECKS)
        cls.server = Server().start()
        cls.token = cls.server.new_tenant("acme")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def scratch(self):
        return tempfile.mkdtemp(dir=self.home)

    def checks_cmd(self, *args, heap=HEAP):
        return ["java", heap, *JVM, "-cp", self.checks + ":" + self.classpath,
                "JavaClientChecks", *args]

    def run_example(self, *args, token=None, watch=False):
        """Runs the example (-Xmx64m); with watch, also its peak RSS in MiB."""
        env = dict(os.environ, SEALBOX_SERVER=self.server.address,
                   SEALBOX_TOKEN=token or self.token)
        process = subprocess.Popen(["java", HEAP, *JVM, "-cp", self.example_classpath,
                                    "SealboxExample", *args], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        peak = 0
        while watch and process.poll() is None:
            try:
                peak = max(peak, read_status(process.pid, "VmHWM"))
            except (OSError, KeyError):
                pass
            time.sleep(0.05)
        out, err = process.communicate(timeout=300)
        return process.returncode, out, err.decode(errors="replace"), peak // 1024

    def example_ok(self, *args, watch=False):
        rc, _, err, peak = self.run_example(*args, watch=watch)
        self.assertEqual(rc, 0, err)
        return peak

    # ---- the library, call by call ------------------------------------------------

    def test_every_call(self):
        directory = self.scratch()
        result = subprocess.run(self.checks_cmd("calls", self.server.address, self.token,
                                                directory),
                                capture_output=True, timeout=300)
        out = result.stdout.decode()
        self.assertEqual(result.returncode, 0, out + result.stderr.decode(errors="replace"))
        for line in [
            "ok seal open", "ok rewrap", "ok generateDataKey", "ok sealBatch openBatch rewrapBatch",
            "ok tampered-unary DecryptionFailedException",
            "ok wrong-aad DecryptionFailedException",
            "ok unknown-key NotFoundException", "ok stream-to-open InvalidArgumentException",
            "ok renew-non-expiring FailedPreconditionException",
            "ok deadline DeadlineExceededException", "ok bad-token UnauthenticatedException",
            "ok sealStream openStream", "ok tampered-stream DecryptionFailedException",
            "ok truncated-stream DecryptionFailedException", "ok sealFile openFile",
            "ok sealEnvelopeFile openEnvelopeFile", "ok tampered-file DecryptionFailedException",
            "ok tampered-envelope DecryptionFailedException",
            "ok envelope-wrong-aad DecryptionFailedException",
            "ok truncated-envelope DecryptionFailedException",
            "ok not-envelope EnvelopeFormatException", "ok failed-opens-leave-nothing",
            "ok request-crc32c-refused InvalidArgumentException",
            "ok answer-crc32c-refused ChecksumException",
        ]:
            self.assertIn(line + "\n", out)

    # ---- the example, and 100 MiB in a 64 MiB heap ---------------------------------

    def test_example_commands(self):
        d = self.scratch()
        p = lambda name: os.path.join(d, name)  # noqa: E731
        with open(p("hello"), "wb") as f:
            f.write(b"hello, sealbox")
        self.example_ok("seal", "--key", "default", "--aad", "row-7", p("hello"), p("hello.s"))
        self.assertEqual(os.path.getsize(p("hello.s")), 14 + 49)
        # The CLI opens what the Java example sealed.
        opened = self.server.cli("open", "--key", "default", "--aad", "row-7", "-i", p("hello.s"),
                                 token=self.token).stdout
        self.assertEqual(opened, b"hello, sealbox")
        self.example_ok("open", "--key", "default", "--aad", "row-7", p("hello.s"), p("hello.o"))
        with open(p("hello.o"), "rb") as f:
            self.assertEqual(f.read(), b"hello, sealbox")
        rc, _, err, _ = self.run_example("open", "--key", "default", "--aad", "row-8",
                                         p("hello.s"), p("x"))
        self.assertEqual((rc, err), (1, "sealbox-example: DecryptionFailedException: "
                                        "decryption failed\n"))
        rc, _, err, _ = self.run_example("seal", "--key", "nope", p("hello"), p("x"))
        self.assertEqual(rc, 1)
        self.assertRegex(err, r"^sealbox-example: NotFoundException: [^\n]+\n$")
        rc, _, err, _ = self.run_example("seal", "--key", "default", p("hello"), p("x"),
                                         token="sbx_nope")
        self.assertRegex(err, r"^sealbox-example: UnauthenticatedException: ")
        rc, _, err, _ = self.run_example("open-envelope", "--key", "default", p("hello"), p("x"))
        self.assertRegex(err, r"^sealbox-example: EnvelopeFormatException: ")
        self.assertFalse(os.path.exists(p("x")))

    def test_100_mib_in_a_64_mib_heap(self):
        d = self.scratch()
        p = lambda name: os.path.join(d, name)  # noqa: E731
        write_random(p("big"), BIG)
        digest = file_sha256(p("big"))
        figures = {}
        for seal, open_, suffix, size in [
                ("seal-stream", "open-stream", "s", 48 + (BIG // 65536) * 65552 + 16),
                ("seal-envelope", "open-envelope", "e", 95 + (BIG // MIB) * (MIB + 16) + 16)]:
            started = time.monotonic()
            peak_seal = self.example_ok(seal, "--key", "default", "--aad", "big", p("big"),
                                        p("big." + suffix), watch=True)
            self.assertEqual(os.path.getsize(p("big." + suffix)), size)
            peak_open = self.example_ok(open_, "--key", "default", "--aad", "big",
                                        p("big." + suffix), p("big.out"), watch=True)
            self.assertEqual(file_sha256(p("big.out")), digest)
            figures[seal] = (time.monotonic() - started, peak_seal, peak_open)
            os.remove(p("big.out"))
            os.remove(p("big." + suffix))
        for name, (seconds, peak_seal, peak_open) in figures.items():
            print(f"java_client_test: 100 MiB {name} and back in {seconds:.1f} s, heap "
                  f"{HEAP}, peak RSS {peak_seal} MiB sealing, {peak_open} MiB opening",
                  file=sys.stderr)

    # ---- retries -----------------------------------------------------------------------

    def test_retry_across_a_restart(self):
        server = Server().start()
        token = server.new_tenant("restart")
        port = server.port
        process = subprocess.Popen(self.checks_cmd("retry", server.address, token),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        try:
            self.assertEqual(process.stdout.readline(), b"ready\n")
            server.stop()
            process.stdin.write(b"go\n")
            process.stdin.flush()
            self.assertEqual(process.stdout.readline(),
                             b"ok no-retry-unavailable UnavailableException\n")
            self.assertEqual(process.stdout.readline(), b"calling\n")
            time.sleep(1.0)  # the call is retrying in the gap
            server.start(listen=f"127.0.0.1:{port}")
            out, err = process.communicate(timeout=60)
            self.assertEqual(process.returncode, 0, err.decode(errors="replace"))
            match = re.search(r"ok retry attempts=(\d+) seconds=([\d.]+)", out.decode())
            self.assertIsNotNone(match, out)
            self.assertGreater(int(match.group(1)), 1)
            self.assertGreater(float(match.group(2)), 1.0)
            print(f"java_client_test: a Seal retried across a restart: {match.group(1)} "
                  f"attempts, {match.group(2)} s", file=sys.stderr)
        finally:
            if process.poll() is None:
                process.kill()
            server.stop()

    # ---- token renewal -----------------------------------------------------------------

    def test_token_renewed_before_expiry(self):
        # 15 s: a busy machine can take several seconds to start the JVM, and the first
        # renewal is at the first call; the next with a third of the life left (10 s).
        token = self.server.admin("token", "issue", "acme", "--ttl", "15s").stdout.decode().strip()
        result = subprocess.run(self.checks_cmd("renew", self.server.address, token, "12"),
                                capture_output=True, timeout=120)
        out = result.stdout.decode()
        self.assertEqual(result.returncode, 0, out + result.stderr.decode(errors="replace"))
        match = re.search(r"ok renew calls=(\d+) renewals=(\d+) last=(\S+)", out)
        self.assertIsNotNone(match, out)
        self.assertGreaterEqual(int(match.group(2)), 2)  # at the first call, then at 2/3 life
        print(f"java_client_test: a 15 s token renewed {match.group(2)} times over "
              f"{match.group(1)} calls in 12 s", file=sys.stderr)
        # The original expires (within seconds of the run's end); the last successor
        # still works.
        wait_for(lambda: self.server.cli("seal", "--key", "default", token=token, input=b"x",
                                         check=False).returncode != 0,
                 "the original token expires", seconds=30)
        self.server.cli("seal", "--key", "default", token=match.group(3), input=b"x")

    # ---- the page ------------------------------------------------------------------------

    def test_first_call_snippet(self):
        if not os.path.exists(JAVA_PAGE):
            self.fail(f"{JAVA_PAGE} is not in the runfiles: it must be in exports_files of "
                      "the root BUILD.bazel")
        with open(JAVA_PAGE) as f:
            page = f.read()
        snippet = re.search(r"```java\n(.*?)```", page, re.S).group(1)
        self.assertIn("class FirstCall", snippet)
        d = self.scratch()
        with open(os.path.join(d, "FirstCall.java"), "w") as f:
            f.write(snippet)
        javac(self.classpath, d, os.path.join(d, "FirstCall.java"))
        env = dict(os.environ, SEALBOX_SERVER=self.server.address, SEALBOX_TOKEN=self.token)
        result = subprocess.run(["java", *JVM, "-cp", d + ":" + self.classpath, "FirstCall"],
                                env=env, capture_output=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        self.assertEqual(result.stdout.decode(),
                         "sealed 63 bytes under version 1\nopened: hello, sealbox\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
