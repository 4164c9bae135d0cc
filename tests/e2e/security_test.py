"""Security and abuse hardening end to end: the real server binary on loopback, the
real CLI and raw sockets. Core dumps off, memory locking reported, per-address auth
limiting, the per-key decryption-failure limit, no secret in any log, error or metric,
stalled streams ended, and thousands of idle connections not starving a client.
The limits' logic is tested in-process (tests/service/service_test.cc); these check
what needs the process: its flags, logs, the CLI's view, sockets."""
import base64
import os
import re
import resource
import socket
import sys
import time
import unittest
import urllib.request

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, load_stubs, read_status  # noqa: E402

KEK = os.urandom(32)


def metrics(server):
    return urllib.request.urlopen(
        f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10).read().decode()


def forms(secret):
    """A secret as raw text and in the encodings it might leak in."""
    raw = secret if isinstance(secret, bytes) else secret.encode()
    out = {raw.hex(), raw.hex().upper(), base64.b64encode(raw).decode().rstrip("="),
           base64.urlsafe_b64encode(raw).decode().rstrip("=")}
    try:
        out.add(raw.decode())
    except UnicodeDecodeError:
        pass
    return {f for f in out if len(f) >= 8}


class Security(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(kek=KEK, extra_args=[
            "--auth-failures-per-minute", "5", "--max-decryption-failures-per-key", "3",
            "--stream-idle-seconds", "1"]).start()
        cls.token = cls.server.new_tenant("acme")
        cls.other_token = cls.server.new_tenant("globex")
        cls.cli_output = []  # every CLI stdout/stderr that might hold a secret

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def cli(self, *args, **kwargs):
        result = self.server.cli(*args, check=False, **kwargs)
        self.cli_output.append(result.stderr)
        return result

    def test_core_dumps_disabled_and_memory_lock_reported(self):
        pid = self.server.process.pid
        with open(f"/proc/{pid}/limits") as f:
            core = [line for line in f if line.startswith("Max core file size")][0]
        self.assertEqual(core.split()[4:6], ["0", "0"], core)
        log = self.server.output()
        line = re.search(r'\{[^\n]*"event":"process_hardening"[^\n]*', log).group(0)
        self.assertIn('"core_dumps":"disabled"', line)
        self.assertIn('"dumpable":false', line)
        # A non-dumpable process's /proc files belong to root.
        if os.getuid() != 0:
            self.assertEqual(os.stat(f"/proc/{pid}/stat").st_uid, 0)
        if '"memory_lock":"ok"' in line:
            self.assertGreater(read_status(pid, "VmLck"), 0)
        else:
            self.assertIn('"memory_lock":"unavailable"', line)
            self.assertIn("RLIMIT_MEMLOCK", line)

    def test_memory_that_cannot_be_locked_is_a_warning(self):
        # No RLIMIT_MEMLOCK and (as root) no CAP_IPC_LOCK: mlock must fail, the server
        # must still serve, say so once, and count the memory as unlocked.
        server = Server(wrapper=["prlimit", "--memlock=0:0", "--", "setpriv",
                                 "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock",
                                 "--"]).start()
        try:
            line = re.search(r'\{[^\n]*"event":"process_hardening"[^\n]*',
                             server.output()).group(0)
            self.assertIn('"level":"warning"', line)
            self.assertIn('"memory_lock":"unavailable"', line)
            self.assertIn("RLIMIT_MEMLOCK", line)
            self.assertEqual(read_status(server.process.pid, "VmLck"), 0)
            token = server.new_tenant("acme")
            sealed = server.cli("seal", "--key", "default", token=token, input=b"x").stdout
            self.assertEqual(server.cli("open", "--key", "default", token=token,
                                        input=sealed).stdout, b"x")
            metrics = urllib.request.urlopen(
                f"http://127.0.0.1:{server.metrics_port}/metrics").read().decode()
            self.assertRegex(metrics, r'sealbox_secret_memory_bytes\{locked="false"\} [1-9]')
        finally:
            server.stop()

    def test_failed_authentication_is_limited_per_address(self):
        # Counting, both planes and the metrics are checked in-process
        # (service_test.cc, FailedAuthenticationIsLimitedPerAddress); here, what only
        # the process shows: the flag, the CLI's view, and one log line with the peer's
        # address and no guessed token. A fresh server: this test's failures must not
        # limit the other tests.
        server = Server(extra_args=["--auth-failures-per-minute", "3"]).start()
        try:
            good = server.new_tenant("acme")
            for i in range(3):
                bad = server.cli("seal", "--key", "default", token=f"sbx_guess{i}",
                                 input=b"x", check=False)
                self.assertEqual(bad.returncode, 4, bad.stderr)
            limited = server.cli("seal", "--key", "default", token=good, input=b"x",
                                 check=False)
            self.assertNotEqual(limited.returncode, 0)
            self.assertIn(b"too many failed authentication", limited.stderr)
            log = server.output()
            self.assertEqual(log.count('"event":"auth_limited"'), 1, log)
            self.assertIn('"peer_address":"127.0.0.1"', log)
            self.assertNotIn("sbx_guess", log)
        finally:
            server.stop()

    def test_decryption_failures_counted_and_limited(self):
        # Which calls count, the refusal and the metrics are checked in-process
        # (service_test.cc, KeysThatFailTooOftenStopOpeningUntilRotated); here, the
        # flag, the CLI's exit codes, the log event, and the reset by a rotation made
        # through the admin CLI (on etcd too: security_etcd_test).
        self.server.admin("key", "create", "acme", "fragile")
        sealed = self.cli("seal", "--key", "fragile", token=self.token, input=b"data").stdout
        forged = bytearray(sealed)
        forged[-1] ^= 1
        for _ in range(3):
            bad = self.cli("open", "--key", "fragile", token=self.token, input=bytes(forged))
            self.assertEqual(bad.returncode, 3, bad.stderr)
        refused = self.cli("open", "--key", "fragile", token=self.token, input=sealed)
        self.assertIn(b"too many decryption failures", refused.stderr)
        self.assertIn('"event":"decryption_limit_reached"', self.server.output())
        self.server.admin("key", "rotate", "acme", "fragile")
        self.assertEqual(self.cli("open", "--key", "fragile", token=self.token,
                                  input=sealed).stdout, b"data")

    def test_stalled_stream_is_ended(self):
        # The watchdog's logic, the freed slot and the metrics are checked in-process
        # (service_test.cc, StalledStreamIsEndedAndItsSlotFreed); here, that
        # --stream-idle-seconds reaches it.
        data_pb2, data_grpc = load_stubs("data")
        stub = data_grpc.CryptoStub(grpc.insecure_channel(self.server.address))

        def requests():
            yield data_pb2.SealStreamRequest(start=data_pb2.StreamStart(key="default"))
            time.sleep(30)  # stalls

        call = stub.SealStream(requests(), metadata=[("authorization", f"Bearer {self.token}")])
        next(call)
        started = time.time()
        with self.assertRaises(grpc.RpcError) as ended:
            next(call)
        self.assertEqual(ended.exception.code(), grpc.StatusCode.CANCELLED)
        self.assertLess(time.time() - started, 10)

    def test_idle_connections_do_not_starve_a_client(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        count = min(2000, hard - 200)
        pid = self.server.process.pid
        rss_before = read_status(pid, "VmRSS")
        sockets = []
        try:
            for i in range(count):
                s = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
                if i % 2 == 0:  # half send the HTTP/2 preface and then nothing
                    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
                sockets.append(s)
            started = time.time()
            sealed = self.cli("seal", "--key", "default", token=self.token, input=b"hello")
            self.assertEqual(sealed.returncode, 0, sealed.stderr)
            took = time.time() - started
            self.assertLess(took, 10)
            growth_mib = (read_status(pid, "VmRSS") - rss_before) / 1024
            print(f"{count} idle connections: a Seal took {took:.2f} s (CLI start "
                  f"included), server RSS +{growth_mib:.1f} MiB")
            self.assertLess(growth_mib, 200, f"{count} idle connections cost {growth_mib} MiB")
        finally:
            for s in sockets:
                s.close()

    def test_zz_no_secrets_anywhere(self):
        # Runs last (zz): every earlier test's CLI output is collected by then.
        plaintext = b"the-plaintext-" + os.urandom(8).hex().encode()
        sealed = self.cli("seal", "--key", "default", token=self.token, input=plaintext).stdout
        self.cli("open", "--key", "default", token=self.token, input=sealed + b"x")
        self.cli("open", "--key", "missing", token=self.token, input=sealed)
        self.cli("seal", "--key", "default", token=self.token + "x", input=plaintext)
        self.server.cli("admin", "tenant", "list", token=self.token, check=False)
        secrets = [KEK, self.server.admin_token, self.token, self.other_token, plaintext]
        haystacks = {"server log": self.server.output(), "metrics": metrics(self.server),
                     "cli errors": b"\n".join(self.cli_output).decode(errors="replace")}
        for secret in secrets:
            for form in forms(secret):
                for name, text in haystacks.items():
                    self.assertNotIn(form, text, f"a secret appears in the {name}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
