"""End-to-end: envelope files (docs/FORMAT.md, "Envelope file (0x03)") sealed and opened
by the Python library (client/python, `Client.seal_envelope_file`) against the real
server, its CRC32C checksums, and the example program built on it."""
import os
import subprocess
import sys
import tempfile
import tracemalloc
import unittest

import grpc
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from google.protobuf.wrappers_pb2 import UInt32Value

sys.path.insert(0, os.path.abspath("tests/e2e"))
sys.path.insert(0, os.path.abspath("client/python"))
import sealbox  # noqa: E402
from harness import Server, file_sha256, read_bytes, write_random  # noqa: E402
from sealbox import envelope  # noqa: E402
from sealbox.checksums import checksum, crc32c, verify  # noqa: E402
from sealbox.v1 import data_pb2  # noqa: E402

EXAMPLE = "client/examples/python/sealbox_example.py"
MIB = 1 << 20
S = envelope.SEGMENT_SIZE


def envelope_size(sealed_key_length, n):
    """docs/FORMAT.md: the header, every full segment, then the last (possibly empty)."""
    return 14 + sealed_key_length + n + 16 * (n // S + 1)


def traced_peak(run):
    """Runs `run()`: the most memory Python allocated meanwhile, in MiB (tracemalloc)."""
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1] / MIB
    finally:
        tracemalloc.stop()


class WithServer(unittest.TestCase):
    """This file's tests share one server (setUpModule) with a tenant of three keys."""


def setUpModule():
    shared = WithServer
    shared.server = Server().start()
    # Admin calls through the CLI: the harness's runtime stubs are a `sealbox.v1`
    # package too, which this library's would hide.
    shared.token = shared.server.new_tenant("acme")
    for key in ("other", "rotating"):
        shared.server.admin("key", "create", "acme", key)
    shared.client = sealbox.Client(shared.server.address, shared.token)


def tearDownModule():
    WithServer.client.close()
    WithServer.server.stop()


class Envelope(WithServer):
    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))

    def path(self, name):
        return os.path.join(self.dir, name)

    def seal(self, source, target, key="default", aad=b"file-1"):
        return self.client.seal_envelope_file(key, source, target, aad)

    def open(self, source, target, key="default", aad=b"file-1"):
        return self.client.open_envelope_file(key, source, target, aad)

    def run_example(self, *args):
        env = dict(os.environ, SEALBOX_TOKEN=self.token, SEALBOX_SERVER=self.server.address,
                   PYTHONPATH=os.path.abspath("client/python"))
        return subprocess.run(["/usr/bin/python3", EXAMPLE, *args], capture_output=True,
                              env=env, timeout=120)

    def test_a_64_mib_file_in_memory_bounded_by_a_segment(self):
        source, sealed, opened = self.path("big"), self.path("big.env"), self.path("big.out")
        write_random(source, 64 * MIB)
        seal_peak = traced_peak(lambda: self.seal(source, sealed))
        with open(sealed, "rb") as f:
            header = f.read(14)
        self.assertEqual((header[0], int.from_bytes(header[1:5], "big"),
                          int.from_bytes(header[12:14], "big")), (0x03, MIB, 81))
        # 64 full segments and an empty last one.
        self.assertEqual(os.path.getsize(sealed), 14 + 81 + 64 * MIB + 16 * 65)
        open_peak = traced_peak(lambda: self.open(sealed, opened))
        self.assertEqual(file_sha256(opened), file_sha256(source))
        # Reading the file whole would take 64 MiB at least.
        print(f"seal_envelope_file on 64 MiB: {seal_peak:.1f} MiB allocated at most sealing, "
              f"{open_peak:.1f} MiB opening")
        self.assertLess(max(seal_peak, open_peak), 8)

    def test_segment_boundaries(self):
        for n in (0, 1, S - 1, S, S + 1, 2 * S):
            with self.subTest(size=n):
                source, sealed, opened = (self.path(f"{n}"), self.path(f"{n}.env"),
                                          self.path(f"{n}.out"))
                write_random(source, n)
                self.assertEqual(self.seal(source, sealed), 1)
                self.assertEqual(os.path.getsize(sealed), envelope_size(81, n))
                self.assertEqual(self.open(sealed, opened), 1)
                self.assertEqual(read_bytes(opened), read_bytes(source))

    def test_decryption_following_only_the_format_document(self):
        source, sealed = self.path("small"), self.path("small.env")
        write_random(source, 5000)
        self.seal(source, sealed, aad=b"order-9")
        data = read_bytes(sealed)
        header, sealed_key = data[:12], data[14:14 + int.from_bytes(data[12:14], "big")]
        data_key = self.client.open("default", sealed_key, b"order-9").plaintext
        nonce = header[5:12] + (0).to_bytes(4, "big") + b"\x01"  # one segment: the last
        self.assertEqual(AESGCM(data_key).decrypt(nonce, data[14 + len(sealed_key):], header),
                         read_bytes(source))

    def assert_fails(self, data, error, message, key="default", aad=b"file-1"):
        """Opening `data` raises `error` with `message`, and leaves no file behind."""
        sealed = self.path("damaged.env")
        with open(sealed, "wb") as f:
            f.write(data)
        out_dir = tempfile.mkdtemp(dir=self.dir)
        with self.assertRaises(error) as raised:
            self.open(sealed, os.path.join(out_dir, "plain"), key=key, aad=aad)
        self.assertIn(message, str(raised.exception))
        self.assertEqual(os.listdir(out_dir), [], "a partial or temporary file was left")

    def test_damaged_files_and_wrong_context_fail_leaving_nothing(self):
        # Three full segments and a last of 5 bytes: damage past the first segment
        # fails after plaintext was written to the temporary file.
        source, sealed = self.path("plain"), self.path("plain.env")
        write_random(source, 3 * S + 5)
        self.seal(source, sealed)
        good = read_bytes(sealed)
        body = 14 + 81
        segment = S + 16

        def flipped(offset):
            data = bytearray(good)
            data[offset] ^= 0x04
            return bytes(data)

        failed = "decryption failed"
        cases = {
            "a bit of the second segment": (flipped(body + segment + 100), failed),
            "a bit of the last segment's tag": (flipped(len(good) - 1), failed),
            "a bit of the nonce prefix": (flipped(7), failed),
            "one byte short": (good[:-1], failed),
            "the last segment dropped": (good[:body + 3 * segment], failed),
            "a short last segment": (good[:body + 3 * segment + 15], failed),
            "one byte appended": (good + b"\0", failed),
            "segments swapped": (good[:body] + good[body + segment:body + 2 * segment]
                                 + good[body:body + segment] + good[body + 2 * segment:],
                                 failed),
        }
        for what, (data, message) in cases.items():
            with self.subTest(what):
                self.assert_fails(data, sealbox.DecryptionFailedError, message)

        # The sealed data key fails on the server: the same error type, from its status
        # details.
        with self.subTest("a bit of the sealed key"):
            self.assert_fails(flipped(20), sealbox.DecryptionFailedError, failed)
        with self.subTest("wrong associated data"):
            self.assert_fails(good, sealbox.DecryptionFailedError, failed, aad=b"file-2")
        with self.subTest("another key's name"):
            self.assert_fails(good, sealbox.DecryptionFailedError, failed, key="other")
        with self.subTest("a key that does not exist"):
            self.assert_fails(good, sealbox.NotFoundError, 'key "nope" not found', key="nope")

    def test_files_that_are_not_envelopes(self):
        good = b"\x03" + S.to_bytes(4, "big") + bytes(7) + (81).to_bytes(2, "big") + bytes(97)
        unary = self.client.seal("default", b"a unary ciphertext").ciphertext
        cases = {
            "empty": b"",
            "a unary ciphertext": unary,
            "a short header": good[:13],
            "a short sealed key": good[:14 + 80],
            "S not a power of two": good[:1] + (S - 1).to_bytes(4, "big") + good[5:],
            "S below 4 KiB": good[:1] + (2048).to_bytes(4, "big") + good[5:],
            "S above 4 MiB": good[:1] + (8 * MIB).to_bytes(4, "big") + good[5:],
            "L below 49": good[:12] + (48).to_bytes(2, "big") + good[14:],
            "L above 1024": good[:12] + (1025).to_bytes(2, "big") + good[14:],
        }
        for what, data in cases.items():
            with self.subTest(what):
                self.assert_fails(data, sealbox.EnvelopeFormatError,
                                  "not a sealbox envelope file")

    def test_a_rewrapped_header_opens_after_rotation(self):
        source, sealed = self.path("plain"), self.path("plain.env")
        write_random(source, 2 * S + 3)
        self.assertEqual(self.seal(source, sealed, key="rotating"), 1)
        self.server.admin("key", "rotate", "acme", "rotating")

        # Rewrap the sealed data key and write it in place of the old: the segments stay.
        data = read_bytes(sealed)
        length = int.from_bytes(data[12:14], "big")
        old_key = data[14:14 + length]
        rewrapped = self.client.rewrap("rotating", old_key, b"file-1")
        self.assertEqual((rewrapped.previous_key_version, rewrapped.key_version), (1, 2))
        new_key = rewrapped.ciphertext
        moved = self.path("moved.env")
        with open(moved, "wb") as f:
            f.write(data[:12] + len(new_key).to_bytes(2, "big") + new_key
                    + data[14 + length:])
        self.assertEqual(self.open(moved, self.path("moved.out"), key="rotating"), 2)
        self.assertEqual(read_bytes(self.path("moved.out")), read_bytes(source))
        # Version 1 is still enabled, so the old header opens too.
        self.assertEqual(self.open(sealed, self.path("old.out"), key="rotating"), 1)

    def test_the_example_program(self):
        source, sealed = self.path("plain"), self.path("plain.env")
        write_random(source, 100)
        result = self.run_example("seal-envelope", "--key", "default", "--aad", "a", source,
                                  sealed)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        result = self.run_example("open-envelope", "--key", "default", "--aad", "a", sealed,
                                  self.path("opened"))
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertEqual(read_bytes(self.path("opened")), read_bytes(source))
        cases = {
            "wrong aad": (("open-envelope", "--key", "default", "--aad", "b", sealed,
                           self.path("o")),
                          "sealbox_example.py: DecryptionFailedError: INVALID_ARGUMENT: "
                          "decryption failed"),
            "not an envelope": (("open-envelope", "--key", "default", source, self.path("o")),
                                "sealbox_example.py: EnvelopeFormatError: INVALID_ARGUMENT: "
                                "not a sealbox "
                                "envelope file"),
            "no input": (("seal-envelope", "--key", "default", self.path("missing"),
                          self.path("o")),
                         "sealbox_example.py: FileNotFoundError: [Errno 2] No such file"),
        }
        for what, (args, message) in cases.items():
            with self.subTest(what):
                result = self.run_example(*args)
                self.assertEqual(result.returncode, 1)
                lines = result.stderr.decode().splitlines()
                self.assertEqual(len(lines), 1, lines)
                self.assertTrue(lines[0].startswith(message), lines)
                self.assertFalse(os.path.exists(self.path("o")))


class Checksums(WithServer):
    def test_known_values(self):
        # docs/FORMAT.md, "Checksums".
        self.assertEqual(crc32c(b"123456789"), 0xE3069283)
        self.assertEqual(crc32c(b"hello, sealbox"), 3630349962)
        self.assertEqual(crc32c(b"hello, sealbox"), 0xD862BE8A)
        self.assertEqual(crc32c(b""), 0)

    def seal(self, plaintext, **checksums):
        """A Seal with the checksums given (the library always sends the right ones)."""
        return self.client._stub.Seal(
            data_pb2.SealRequest(key="default", plaintext=plaintext, **checksums),
            metadata=self.client._metadata(), timeout=30)

    def test_the_server_agrees(self):
        message = b"hello, sealbox"
        sealed = self.seal(message, plaintext_crc32c=checksum(message),
                           associated_data_crc32c=checksum(b""))
        verify(sealed, ["ciphertext"],
               ["verified_plaintext_crc32c", "verified_associated_data_crc32c"])
        opened = self.client._stub.Open(data_pb2.OpenRequest(
            key="default", ciphertext=sealed.ciphertext), metadata=self.client._metadata(),
            timeout=30)
        self.assertEqual(opened.plaintext_crc32c, 3630349962)
        self.assertFalse(opened.verified_ciphertext_crc32c)  # none was sent

    def test_a_wrong_checksum_is_refused(self):
        message = b"hello, sealbox"
        with self.assertRaises(grpc.RpcError) as raised:
            self.seal(message, plaintext_crc32c=UInt32Value(value=crc32c(message) ^ 1))
        self.assertEqual(raised.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("checksum mismatch", raised.exception.details())
        # Through the library, the same refusal is an InvalidArgumentError.
        self.assertIsInstance(sealbox.errors.from_rpc_error(raised.exception),
                              sealbox.InvalidArgumentError)

    def test_verify_catches_a_damaged_or_unchecked_response(self):
        damaged = data_pb2.SealResponse(ciphertext=b"abc", ciphertext_crc32c=crc32c(b"abd"))
        with self.assertRaisesRegex(sealbox.ChecksumError, "ciphertext does not match"):
            verify(damaged, ["ciphertext"], [])
        unchecked = data_pb2.SealResponse(ciphertext=b"abc", ciphertext_crc32c=crc32c(b"abc"))
        with self.assertRaisesRegex(sealbox.ChecksumError, "verified_plaintext_crc32c is false"):
            verify(unchecked, ["ciphertext"], ["verified_plaintext_crc32c"])


if __name__ == "__main__":
    unittest.main()
