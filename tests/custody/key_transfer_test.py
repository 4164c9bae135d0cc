"""Keys in and out only wrapped, end to end: the real sealbox-server, key material
wrapped with the openssl command line exactly as docs/OPERATIONS.md shows it and with
python3-cryptography independently, a key moved between two real servers (what was
sealed on the first opens on the second), and every refusal changing nothing."""
import glob
import os
import re
import sys
import time
import unittest

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.keywrap import aes_key_wrap_with_padding

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e"))
from harness import Server, metric, run_doc_block  # noqa: E402


def wrap_for(public_pem, material):
    """CKM_RSA_AES_KEY_WRAP with python3-cryptography: RSA-OAEP-SHA-256 of a one-time
    AES-256 key, then AES key wrap with padding (RFC 5649) of the material."""
    public = serialization.load_pem_public_key(public_pem)
    aes_key = os.urandom(32)
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
    return public.encrypt(aes_key, oaep) + aes_key_wrap_with_padding(aes_key, material)


def open_unary(material, tenant, key, sealed):
    """A unary ciphertext opened following only docs/FORMAT.md."""
    epoch_id, nonce = sealed[5:21], sealed[21:33]
    name = lambda s: bytes([len(s)]) + s  # noqa: E731
    info = b"sealbox/v1/unary" + name(tenant) + name(key)
    subkey = HKDF(hashes.SHA256(), 32, epoch_id, info).derive(material)
    return AESGCM(subkey).decrypt(nonce, sealed[33:], sealed[:33] + bytes(8))


class KeyTransferTest(unittest.TestCase):
    def test_the_operations_guide_imports_wrapped_material_as_written(self):
        server = Server().start()
        server.admin("tenant", "create", "acme")
        token = server.admin("token", "issue", "acme").stdout.decode().strip()
        result = run_doc_block("### Bringing your own key, wrapped",
                               {"SEALBOX_SERVER": server.address,
                                "SEALBOX_TOKEN": server.admin_token})
        self.assertIn("acme/byok  AES-256-GCM  primary v1", result.stdout)
        self.assertIn("imported", result.stdout)
        self.assertFalse(os.path.exists(os.path.join(result.cwd, "aes.key")))
        with open(os.path.join(result.cwd, "material.bin"), "rb") as f:
            material = f.read()
        # What the service seals under the imported key opens here with material.bin.
        sealed = server.cli("seal", "--key", "byok", token=token, input=b"wrapped in").stdout
        self.assertEqual(open_unary(material, b"acme", b"byok", sealed), b"wrapped in")
        self.assertEqual(metric(server, 'sealbox_custody_events_total{event="key_imported_wrapped"}'),
                         1)
        # Nothing of the material in the server's log.
        self.assertNotIn(material.hex(), server.output())
        server.stop()

    def test_a_refused_import_changes_nothing(self):
        server = Server().start()
        other = Server().start()
        for s in (server, other):
            s.admin("tenant", "create", "acme")
        pem = os.path.join(server.home, "import.pem")
        import_id = server.admin("key", "import-params", "acme", "--public-key-out",
                                 pem).stdout.decode().strip()
        other_pem = os.path.join(other.home, "import.pem")
        other.admin("key", "import-params", "acme", "--public-key-out", other_pem)
        with open(pem, "rb") as f:
            public = f.read()
        with open(other_pem, "rb") as f:
            other_public = f.read()
        material = os.urandom(32)

        def refused(wrapped, key_id=import_id):
            path = os.path.join(server.home, "wrapped")
            with open(path, "wb") as f:
                f.write(wrapped)
            result = server.admin("key", "import-wrapped", "acme", "byok", "--import-key-id",
                                  key_id, "--wrapped-file", path, check=False)
            self.assertNotEqual(result.returncode, 0)
            keys = server.admin("key", "list", "acme").stdout.decode()
            self.assertNotIn("byok", keys)  # nothing was made
            return result.stderr.decode()

        good = wrap_for(public, material)
        altered = good[:-1] + bytes([good[-1] ^ 1])
        self.assertIn("INVALID_ARGUMENT: the key material does not unwrap", refused(altered))
        self.assertRegex(refused(wrap_for(other_public, material)),
                         r"INVALID_ARGUMENT: .*does not decrypt under this import key")
        self.assertIn("NOT_FOUND: tenant acme has no import key 'feedfacefeedface'",
                      refused(good, "feedfacefeedface"))
        self.assertIn("INVALID_ARGUMENT", refused(good[:100]))
        # An import key that lives one second.
        short_pem = os.path.join(server.home, "short.pem")
        short_id = server.admin("key", "import-params", "acme", "--ttl", "1s",
                                "--public-key-out", short_pem).stdout.decode().strip()
        self.assertNotEqual(short_id, import_id)
        with open(short_pem, "rb") as f:
            short_public = f.read()
        time.sleep(2.1)
        self.assertRegex(refused(wrap_for(short_public, material), short_id),
                         r"FAILED_PRECONDITION: import key \w+ of tenant acme expired at")
        self.assertEqual(metric(server,
                                'sealbox_custody_events_total{event="wrapped_import_refused"}'), 5)
        # The good one still goes in, and opens as the material says.
        path = os.path.join(server.home, "wrapped")
        with open(path, "wb") as f:
            f.write(good)
        server.admin("key", "import-wrapped", "acme", "byok", "--import-key-id", import_id,
                     "--wrapped-file", path)
        token = server.admin("token", "issue", "acme").stdout.decode().strip()
        sealed = server.cli("seal", "--key", "byok", token=token, input=b"in at last").stdout
        self.assertEqual(open_unary(material, b"acme", b"byok", sealed), b"in at last")
        server.stop()
        other.stop()

    def test_an_exportable_key_moves_and_a_non_exportable_one_cannot_leave(self):
        audit = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), f"audit-{time.time_ns()}.log")
        a = Server(extra_args=["--audit", "admin", "--audit-log", audit]).start()
        b = Server(admin_token=a.admin_token).start()
        a.admin("tenant", "create", "acme")
        a.admin("key", "create", "acme", "db", "--exportable")
        a.admin("key", "create", "acme", "secret")
        token_a = a.admin("token", "issue", "acme").stdout.decode().strip()
        sealed = []
        for version in range(1, 4):
            if version > 1:
                a.admin("key", "rotate", "acme", "db")
            sealed.append(a.cli("seal", "--key", "db", token=token_a,
                                input=b"sealed under v%d" % version).stdout)
        secret = a.cli("seal", "--key", "secret", token=token_a, input=b"stays").stdout
        b.admin("tenant", "create", "acme")

        result = run_doc_block("### Moving a key to another sealbox",
                               {"A": a.address, "B": b.address, "SEALBOX_TOKEN": a.admin_token})
        self.assertIn("exported 3 version(s) of acme/db to db.export.json", result.stdout)
        self.assertIn("acme/db  AES-256-GCM  primary v3", result.stdout)
        token_b = b.admin("token", "issue", "acme").stdout.decode().strip()
        for version, ciphertext in enumerate(sealed, start=1):
            self.assertEqual(b.cli("open", "--key", "db", token=token_b, input=ciphertext).stdout,
                             b"sealed under v%d" % version)
        # The export holds no material in the clear.
        with open(os.path.join(result.cwd, "db.export.json")) as f:
            export = f.read()
        self.assertEqual(len(re.findall(r'"wrapped_material"', export)), 3)

        # A key not created exportable never leaves, and the attempt is on record.
        pem = glob.glob(os.path.join(result.cwd, "b.pem"))[0]
        refused = a.admin("key", "export", "acme", "secret", "--public-key", pem,
                          "--import-key-id", "x", "--out", os.path.join(a.home, "s.json"),
                          check=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn('FAILED_PRECONDITION: key "acme/secret" is not exportable',
                      refused.stderr.decode())
        self.assertFalse(os.path.exists(os.path.join(a.home, "s.json")))
        self.assertEqual(metric(a, 'sealbox_custody_events_total{event="export_refused"}'), 1)
        self.assertEqual(b.cli("open", "--key", "secret", token=token_b, input=secret,
                               check=False).returncode != 0, True)
        a.stop()
        b.stop()
        with open(audit) as f:
            lines = [line for line in f if '"method":"ExportKey"' in line]
        self.assertEqual(len(lines), 2)
        self.assertIn('"code":"OK"', lines[0])
        self.assertIn('"key":"db"', lines[0])
        self.assertIn('"code":"FAILED_PRECONDITION"', lines[1])
        self.assertIn('"key":"secret"', lines[1])


if __name__ == "__main__":
    unittest.main(verbosity=2)
