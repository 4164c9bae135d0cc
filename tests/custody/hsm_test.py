"""Key custody end to end: the real sealbox-server with its KEK sealed by a key in a
real HSM (SoftHSM2 over PKCS#11, a token of the test's own), on a data directory and
on a real etcd shared by two replicas. The KEK is recovered independently (PyKCS11)
to prove it is nowhere on disk or in etcd."""
import base64
import json
import os
import re
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
import harness  # noqa: E402
from harness import (Server, SoftHsm, kek_fingerprint, metric, run_doc_block,  # noqa: E402
                     wait_for)


def spellings(kek):
    """The ways a KEK could have been written down."""
    return [kek, kek.hex().encode(), kek.hex().upper().encode(), base64.b64encode(kek),
            base64.urlsafe_b64encode(kek).rstrip(b"=")]


def files_under(folder):
    for root, _, names in os.walk(folder):
        for name in names:
            yield os.path.join(root, name)


def health(server, service):
    return server.cli("health", "--service", service, check=False).stdout.decode().strip()


class HsmTest(unittest.TestCase):
    def test_the_format_guide_names_the_kek_fingerprint_rightly(self):
        with open("docs/FORMAT.md") as f:
            text = f.read()
        self.assertIn("`00 01 02 … 1f` (the 32 bytes 0 to 31) it is `%s`"
                      % kek_fingerprint(bytes(range(32))).hex(), text)

    def test_the_operations_guide_sets_up_an_hsm_as_written(self):
        out = run_doc_block("### The KEK in an HSM").stdout
        self.assertIn("Access:     sensitive, always sensitive, never extractable, local", out)
        self.assertRegex(out, r"fingerprint    [0-9a-f]{32}\n")
        self.assertIn("sealed by      PKCS#11 key 'sealbox-root' on token 'sealbox'", out)
        self.assertIn("rotation       none under way", out)
        self.assertRegex(out, r"kek\.sealed\nkeystore\.lock\nkeystore\.sbx\n")

    def test_serves_restarts_and_keeps_no_kek_on_disk(self):
        hsm = SoftHsm()
        server = Server(hsm=hsm, extra_args=["--hsm-create-key"]).start()
        self.assertIn('"event":"root_key_created"', server.output())
        self.assertIn('"event":"kek_created"', server.output())
        token = server.new_tenant("acme")
        sealed = server.cli("seal", "--key", "default", token=token, input=b"before restart").stdout
        server.stop()

        # The key --hsm-create-key made never leaves the HSM.
        listing = hsm.tool("--list-objects", "--type", "secrkey")
        self.assertIn("label:      sealbox-root", listing)
        self.assertIn("never extractable", listing)

        server.start()
        self.assertIn('"event":"kek_unsealed"', server.output())
        self.assertEqual(server.cli("open", "--key", "default", token=token, input=sealed).stdout, b"before restart")

        # The KEK, as whoever holds the HSM key and its PIN could unseal it...
        with open(os.path.join(server.data_dir, "kek.sealed"), "rb") as f:
            kek, fingerprint = hsm.unseal(f.read(), "sealbox-root")
        self.assertEqual(kek_fingerprint(kek), fingerprint)
        # ...is the keystore's (its header names the KEK by the same fingerprint)...
        with open(os.path.join(server.data_dir, "keystore.sbx"), "rb") as f:
            self.assertEqual(f.read(64)[20:36], fingerprint)
        # ...and is written nowhere: not in the data directory, not in the logs.
        server.stop()
        searched = list(files_under(server.data_dir)) + [server.log_path]
        self.assertGreaterEqual(len(searched), 4)
        for path in searched:
            with open(path, "rb") as f:
                content = f.read()
            for spelling in spellings(kek):
                self.assertNotIn(spelling, content, path)

    def test_refuses_to_start_with_a_sentence_an_operator_can_act_on(self):
        hsm = SoftHsm()
        hsm.make_key("sealbox-root")
        hsm.make_key("leaky", extractable=True)
        wrong_pin = os.path.join(hsm.home, "wrong-pin")
        with open(wrong_pin, "w") as f:
            f.write("not-the-pin\n")

        def refused(*args, key="sealbox-root", pin_file=None):
            server = Server(hsm=hsm, hsm_key=key, extra_args=list(args))
            if pin_file:
                server.kek_args = lambda: hsm.server_args(key, pin_file)
            with self.assertRaises(RuntimeError) as failed:
                server.start()
            self.assertIn("server exited 1", str(failed.exception))
            return str(failed.exception)

        self.assertRegex(refused(pin_file=wrong_pin),
                         r"token 'sealbox' refused the PIN in .*wrong-pin \(--hsm-pin-file\): "
                         r"CKR_PIN_INCORRECT")
        self.assertIn("token 'sealbox' has no secret key labelled 'missing' (--hsm-key). Make one "
                      "the HSM never releases", refused(key="missing"))
        self.assertIn("HSM key 'leaky' on token 'sealbox' could leave the HSM (CKA_EXTRACTABLE is "
                      "true)", refused(key="leaky"))
        # No HSM at all: an error, never a fallback to a KEK file.
        server = Server(hsm=hsm)
        server.kek_args = lambda: ["--hsm-module", "/nonexistent/libvendor-pkcs11.so",
                                   "--hsm-token", "sealbox", "--hsm-key", "sealbox-root",
                                   "--hsm-pin-file", hsm.pin_file]
        with self.assertRaises(RuntimeError) as failed:
            server.start()
        self.assertIn("cannot load the PKCS#11 module /nonexistent/libvendor-pkcs11.so",
                      str(failed.exception))
        server.kek_args = lambda: hsm.server_args("sealbox-root") + ["--kek-file", server.kek_file]
        with self.assertRaises(RuntimeError) as failed:
            server.start()
        self.assertIn("give no --kek-file or SEALBOX_KEK with it", str(failed.exception))
        # None of them wrote a sealed KEK or a keystore.
        self.assertFalse(os.path.exists(os.path.join(server.data_dir, "kek.sealed")))

    def test_an_hsm_lost_while_serving_is_reported_and_serving_goes_on(self):
        hsm = SoftHsm()
        hsm.make_key("sealbox-root")
        audit = os.path.join(hsm.home, "audit.log")
        server = Server(hsm=hsm, extra_args=["--hsm-check-seconds", "1", "--audit", "admin",
                                             "--audit-log", audit]).start()
        token = server.new_tenant("acme")
        self.assertEqual(health(server, "sealbox.RootKey"), "SERVING")
        self.assertEqual(metric(server, "sealbox_root_key_up"), 1)

        # The token's files go away: to this server, the HSM is gone.
        away = hsm.token_dir + ".away"
        os.rename(hsm.token_dir, away)
        try:
            wait_for(lambda: metric(server, "sealbox_root_key_up") == 0, "sealbox_root_key_up 0")
            self.assertEqual(health(server, "sealbox.RootKey"), "NOT_SERVING")
            self.assertEqual(health(server, ""), "SERVING")
            sealed = server.cli("seal", "--key", "default", token=token, input=b"still").stdout
            self.assertEqual(server.cli("open", "--key", "default", token=token, input=sealed).stdout, b"still")
        finally:
            os.rename(away, hsm.token_dir)
        wait_for(lambda: metric(server, "sealbox_root_key_up") == 1, "sealbox_root_key_up 1")
        self.assertEqual(health(server, "sealbox.RootKey"), "SERVING")
        server.stop()
        with open(audit) as f:
            methods = re.findall(r'"service":"sealbox.custody","method":"(\w+)","code":"(\w+)"',
                                 f.read())
        self.assertEqual(methods, [("CreateKek", "OK"), ("RootKeyLost", "UNAVAILABLE"),
                                   ("RootKeyBack", "OK")])
        for line in server.output().splitlines():
            if '"event":"root_key_lost"' in line:
                self.assertIn("still serving from the KEK in memory", line)
                break
        else:
            self.fail("no root_key_lost line")

    def test_replicas_on_etcd_share_one_sealed_kek(self):
        hsm = SoftHsm()
        hsm.make_key("sealbox-root")
        etcd = harness.Etcd()
        etcd.start()
        try:
            prefix = "/custody-" + os.urandom(4).hex() + "/"
            replicas = [Server(hsm=hsm, etcd=etcd, prefix=prefix,
                               admin_token="custody-admin-token") for _ in range(2)]
            # Both with --init at once: they agree on whichever KEK was written first.
            failures = []
            def start(replica):
                try:
                    replica.start()
                except Exception as e:  # reported below, on the test's thread
                    failures.append(e)
            threads = [threading.Thread(target=start, args=(r,)) for r in replicas]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            self.assertEqual(failures, [])
            one, two = replicas
            token = one.new_tenant("acme")
            sealed = one.cli("seal", "--key", "default", token=token, input=b"shared").stdout
            self.assertEqual(two.cli("open", "--key", "default", token=token, input=sealed).stdout, b"shared")

            # Every key and value etcd holds, base64 in etcdctl's JSON.
            stored = {base64.b64decode(kv["key"]): base64.b64decode(kv.get("value", ""))
                      for kv in json.loads(etcd.etcdctl("get", "--prefix", "", "-w", "json"))
                      .get("kvs", [])}
            self.assertIn((prefix + "kek").encode(), stored)
            kek, fingerprint = hsm.unseal(stored[(prefix + "kek").encode()], "sealbox-root")
            self.assertEqual(kek_fingerprint(kek), fingerprint)
            self.assertGreaterEqual(len(stored), 5)  # marker, tenant, key, token, sealed KEK
            everything = b"".join(k + v for k, v in stored.items())
            for spelling in spellings(kek):
                self.assertNotIn(spelling, everything)
            for replica in replicas:
                self.assertEqual(replica.stop(), 0)
            created = [r.output().count('"event":"kek_created"') for r in replicas]
            unsealed = [r.output().count('"event":"kek_unsealed"') for r in replicas]
            self.assertEqual(sorted(created), [0, 1])
            self.assertEqual(sorted(unsealed), [0, 1])
            for replica in replicas:
                for spelling in spellings(kek):
                    self.assertNotIn(spelling.decode(errors="replace"), replica.output())
        finally:
            etcd.close()

    def test_a_keystore_under_a_kek_file_moves_under_the_hsm(self):
        old = Server()
        old.start()
        token = old.new_tenant("acme")
        sealed = old.cli("seal", "--key", "default", token=token, input=b"moved").stdout
        old.stop()

        hsm = SoftHsm()
        hsm.make_key("sealbox-root")
        moved = Server(data_dir=old.data_dir, admin_token=old.admin_token, hsm=hsm,
                       extra_args=["--previous-kek-file", old.kek_file])
        moved.start()
        self.assertIn('"event":"keystore_rewrapped"', moved.output())
        self.assertEqual(moved.cli("open", "--key", "default", token=token, input=sealed).stdout, b"moved")
        moved.stop()
        with open(os.path.join(old.data_dir, "kek.sealed"), "rb") as f:
            kek, fingerprint = hsm.unseal(f.read(), "sealbox-root")
        with open(os.path.join(old.data_dir, "keystore.sbx"), "rb") as f:
            self.assertEqual(f.read(64)[20:36], fingerprint)
        # The old KEK file is no longer needed: without it, the keystore still opens.
        moved.extra_args = []
        moved.start()
        self.assertEqual(moved.cli("open", "--key", "default", token=token, input=sealed).stdout, b"moved")
        moved.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
