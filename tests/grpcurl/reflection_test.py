"""The server as grpcurl sees it: nothing but reflection, no .proto files, no stubs.

Every listed service resolves with all its imports, over reflection v1 and v1alpha;
every element of the sealbox.v1 API carries a comment; health, Seal/Open and both
streams work through messages built from the descriptors fetched.
"""

import base64
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../e2e"))
os.environ.setdefault("SEALBOX_PROTO_DIR", os.path.join(HERE, "../../proto"))

import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402

from describe import comments, elements  # noqa: E402
from harness import Server  # noqa: E402
from reflection_client import ReflectionClient, ReflectionError  # noqa: E402



class ReflectionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server().start()
        cls.token = cls.server.new_tenant("acme")
        cls.channel = grpc.insecure_channel(cls.server.address)
        cls.auth = [("authorization", f"Bearer {cls.token}")]

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def client(self, version="v1"):
        return ReflectionClient(self.channel, version)

    def test_every_listed_service_resolves_in_both_versions(self):
        for version in ("v1", "v1alpha"):
            with self.subTest(version=version):
                client = self.client(version)
                services = client.list_services()
                self.assertEqual(sorted(services), [
                    "grpc.health.v1.Health",
                    "grpc.reflection.v1.ServerReflection",
                    "grpc.reflection.v1alpha.ServerReflection",
                    "sealbox.v1.Admin",
                    "sealbox.v1.Crypto",
                ])
                for name in services:
                    service = client.service(name)
                    self.assertGreater(len(service.methods), 0, name)
                    for method in service.methods:  # every type the calls use is known
                        client.message_class(method.input_type)
                        client.message_class(method.output_type)
                self.assertIn("google/protobuf/timestamp.proto", client.files)

    def test_unknown_names_are_errors_and_the_stream_goes_on(self):
        client = self.client()
        with self.assertRaises(ReflectionError) as caught:
            client.resolve_symbol("sealbox.v1.NoSuchThing\n\x00")
        self.assertEqual(caught.exception.code, 5)  # NOT_FOUND
        self.assertNotIn("\n", caught.exception.message)
        self.assertNotIn("\x00", caught.exception.message)
        with self.assertRaises(ReflectionError):
            client.resolve_file("no/such.proto")
        client.resolve_file("sealbox/v1/data.proto")
        self.assertIn("sealbox/v1/data.proto", client.files)

    def test_every_part_of_the_api_is_commented(self):
        client = self.client()
        client.service("sealbox.v1.Crypto")
        client.service("sealbox.v1.Admin")
        client.service("grpc.health.v1.Health")
        checked = 0
        for name in ("sealbox/v1/data.proto", "sealbox/v1/admin.proto",
                     "grpc/health/v1/health.proto"):
            file = client.files[name]
            notes = comments(file)
            for full_name, kind, _, path in elements(file):
                with self.subTest(element=full_name):
                    self.assertTrue(tuple(path) in notes, f"{kind} {full_name} has no comment")
                    checked += 1
        self.assertGreater(checked, 120)
        crypto = comments(client.files["sealbox/v1/data.proto"])
        protocol = " ".join(crypto.values())
        for fact in ("Half-close", "64 KiB", "decryption failed", "step by step"):
            self.assertIn(fact, protocol)

    def test_describe_shows_the_comments(self):
        env = dict(os.environ, PATH=HERE + os.pathsep + os.environ["PATH"])
        out = subprocess.run(
            ["grpcurl", "-plaintext", self.server.address, "describe",
             "sealbox.v1.SealStreamRequest"],
            env=env, check=True, capture_output=True, text=True).stdout
        self.assertTrue(out.startswith("sealbox.v1.SealStreamRequest is a message:\n"), out)
        self.assertIn("// One message of a SealStream call", out)
        self.assertIn("// First message only: which key", out)
        self.assertIn("bytes plaintext_chunk = 2;", out)

    def test_health_through_reflection(self):
        client = self.client()
        for service in ("", "sealbox.v1.Crypto", "sealbox.v1.Admin"):
            (answer,) = client.call("grpc.health.v1.Health/Check", [{"service": service}])
            self.assertEqual(json_format.MessageToDict(answer), {"status": "SERVING"})
        with self.assertRaises(grpc.RpcError) as caught:
            client.call("grpc.health.v1.Health/Check", [{"service": "no.such.Service"}])
        self.assertEqual(caught.exception.code(), grpc.StatusCode.NOT_FOUND)

    def test_seal_and_open_through_reflection(self):
        client = self.client()
        (sealed,) = client.call("sealbox.v1.Crypto/Seal", [{
            "key": "default", "plaintext": "aGVsbG8=", "associatedData": "cm93LTc="}],
            self.auth)
        sealed = json_format.MessageToDict(sealed)
        self.assertEqual(sealed["keyVersion"], 1)
        (opened,) = client.call("sealbox.v1.Crypto/Open", [{
            "key": "default", "ciphertext": sealed["ciphertext"],
            "associatedData": "cm93LTc="}], self.auth)
        self.assertEqual(json_format.MessageToDict(opened)["plaintext"], "aGVsbG8=")
        with self.assertRaises(grpc.RpcError) as caught:
            client.call("sealbox.v1.Crypto/Open", [{
                "key": "default", "ciphertext": sealed["ciphertext"]}], self.auth)
        self.assertEqual(caught.exception.details(), "decryption failed")

    def test_both_streams_through_reflection(self):
        client = self.client()
        data = os.urandom(200_000)
        chunks = [data[i:i + 70_000] for i in range(0, len(data), 70_000)]
        requests = [{"start": {"key": "default", "segmentSize": 65536}}] + [
            {"plaintextChunk": base64.b64encode(c).decode()} for c in chunks]
        sealed = client.call("sealbox.v1.Crypto/SealStream", requests, self.auth)
        stream = b"".join(m.ciphertext_chunk for m in sealed)
        self.assertEqual(len(stream), 48 + len(data) + 16 * 4)  # 4 segments
        opened = client.call("sealbox.v1.Crypto/OpenStream", [
            {"start": {"key": "default"}},
            {"ciphertextChunk": base64.b64encode(stream[:1000]).decode()},
            {"ciphertextChunk": base64.b64encode(stream[1000:]).decode()}], self.auth)
        self.assertEqual(b"".join(m.plaintext_chunk for m in opened), data)


if __name__ == "__main__":
    unittest.main(verbosity=2)
