"""The Python library (client/python) against the client contract, without a server:
client/contract/contract.json (retry policy, error table, envelope numbers) and the
static vectors beside it (envelope files, status details, batch item errors), which
make_vectors.py must still write byte for byte."""
import filecmp
import hashlib
import json
import os
import sys
import tempfile
import types
import unittest
from unittest import mock

import grpc

sys.path.insert(0, os.path.abspath("client/python"))
from sealbox import envelope, errors, retry  # noqa: E402

CONTRACT_DIR = "client/contract"
with open(os.path.join(CONTRACT_DIR, "contract.json")) as f:
    CONTRACT = json.load(f)
with open(os.path.join(CONTRACT_DIR, "vectors/vectors.json")) as f:
    VECTORS = json.load(f)
POLICY = CONTRACT["serviceConfig"]["methodConfig"][0]["retryPolicy"]
ERRORS = CONTRACT["errors"]
ENV = CONTRACT["envelope"]


def seconds(duration):
    """A service config duration ("0.1s") in seconds."""
    assert duration.endswith("s"), duration
    return float(duration[:-1])


def row_for(code, reason=""):
    """The errors.fromServer row for a code and reason."""
    for row in ERRORS["fromServer"]:
        if row["code"] == code and row["reason"] == reason:
            return row
    raise AssertionError(f"contract.json has no row for {code} {reason!r}")


class Retry(unittest.TestCase):
    def test_defaults_are_the_service_configs(self):
        policy = retry.RetryPolicy()
        self.assertEqual(policy.max_attempts, POLICY["maxAttempts"])
        self.assertEqual(policy.initial_backoff, seconds(POLICY["initialBackoff"]))
        self.assertEqual(policy.max_backoff, seconds(POLICY["maxBackoff"]))
        self.assertEqual(policy.multiplier, POLICY["backoffMultiplier"])

    def test_backoff_ceilings(self):
        policy = retry.RetryPolicy()
        with mock.patch("random.uniform", lambda low, high: high):  # always the ceiling
            for attempt in range(1, POLICY["maxAttempts"]):
                want = min(seconds(POLICY["maxBackoff"]), seconds(POLICY["initialBackoff"])
                           * POLICY["backoffMultiplier"] ** (attempt - 1))
                self.assertAlmostEqual(policy.backoff(attempt), want, msg=f"attempt {attempt}")

    def test_only_the_retryable_codes_are_retried(self):
        retryable = set(POLICY["retryableStatusCodes"])
        for row in ERRORS["fromServer"]:
            calls = []

            def attempt(_remaining, row=row):
                calls.append(1)
                raise errors.error_for(grpc.StatusCode[row["code"]], "x", row["reason"])
            with mock.patch("time.sleep"), self.assertRaises(errors.SealboxError):
                retry.with_retries(retry.RetryPolicy(), None, attempt)
            again = row["code"] in retryable and row["reason"] not in \
                CONTRACT["retry"]["neverRetriedReasons"]
            self.assertEqual(len(calls), POLICY["maxAttempts"] if again else 1, row)


class Errors(unittest.TestCase):
    def test_status_to_class(self):
        for row in ERRORS["fromServer"]:
            error = errors.error_for(grpc.StatusCode[row["code"]], "m", row["reason"])
            self.assertEqual(type(error).__name__, row["python"], row)
            self.assertIsInstance(error, getattr(errors, ERRORS["base"]["python"]))

    def test_library_errors(self):
        made = {"answer checksum wrong": errors.ChecksumError("x"),
                "not an envelope file": errors.EnvelopeFormatError("x")}
        for row in ERRORS["fromLibrary"]:
            if row["case"] in made:
                self.assertEqual(type(made[row["case"]]).__name__, row["python"])
                self.assertEqual(made[row["case"]].code, grpc.StatusCode[row["code"]])

    def test_names(self):
        self.assertEqual(errors.ERROR_DOMAIN, ERRORS["domain"])
        self.assertEqual(errors._STATUS_DETAILS_KEY, ERRORS["statusDetailsTrailer"])
        self.assertEqual(errors._ERROR_INFO_TYPE, ERRORS["errorInfoType"])

    def test_status_details_vectors(self):
        for case in VECTORS["statusDetails"]["cases"]:
            reason = errors._sealbox_reason(bytes.fromhex(case["hex"]))
            self.assertEqual(reason == "DECRYPTION_FAILED", case["decryptionFailed"], case["name"])

    def test_item_error_vectors(self):
        for case in VECTORS["itemErrors"]["cases"]:
            item = types.SimpleNamespace(code=grpc.StatusCode[case["code"]].value[0],
                                         message="m", reason=case["reason"])
            want = (row_for("INVALID_ARGUMENT", "DECRYPTION_FAILED")
                    if case["expect"] == "DECRYPTION_FAILED" else row_for(case["expect"]))
            self.assertEqual(type(errors.from_item_error(item)).__name__, want["python"], case)


class FakeClient:
    """Open of the vectors' sealed data key: the data key, and what it was asked."""

    def __init__(self, data_key):
        self.data_key, self.asked = data_key, []

    def open(self, key, ciphertext, associated_data):
        self.asked.append(ciphertext)
        return types.SimpleNamespace(plaintext=self.data_key, key_version=1)


class Envelope(unittest.TestCase):
    def test_constants(self):
        self.assertEqual(envelope.FORMAT, ENV["format"])
        self.assertEqual(envelope.SEGMENT_SIZE, ENV["writerSegmentBytes"])
        self.assertEqual(envelope.MIN_SEGMENT_SIZE, ENV["minSegmentBytes"])
        self.assertEqual(envelope.MAX_SEGMENT_SIZE, ENV["maxSegmentBytes"])
        self.assertEqual(envelope.MIN_SEALED_KEY, ENV["minSealedKeyBytes"])
        self.assertEqual(envelope.MAX_SEALED_KEY, ENV["maxSealedKeyBytes"])
        self.assertEqual(envelope.DATA_KEY_BYTES, ENV["dataKeyBytes"])
        self.assertEqual(envelope.TAG_BYTES, ENV["tagBytes"])

    def test_vectors(self):
        kinds = {"DecryptionFailed": errors.DecryptionFailedError,
                 "EnvelopeFormat": errors.EnvelopeFormatError}
        data_key = bytes.fromhex(VECTORS["envelope"]["dataKey"])
        out_dir = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        for case in VECTORS["envelope"]["cases"]:
            with self.subTest(case["file"]):
                path = os.path.join(CONTRACT_DIR, "vectors", case["file"])
                out = os.path.join(out_dir, os.path.basename(path))
                client = FakeClient(data_key)
                if case["expect"] == "ok":
                    envelope.open_file(client, "k", path, out, b"", None)
                    with open(out, "rb") as f:
                        self.assertEqual(hashlib.sha256(f.read()).hexdigest(),
                                         case["plaintextSha256"])
                    with open(path, "rb") as f:
                        head = f.read(ENV["fixedHeaderBytes"])
                        length = int.from_bytes(head[ENV["sealedKeyLengthOffset"]:][:2], "big")
                        self.assertEqual(client.asked, [f.read(length)])
                else:
                    with self.assertRaises(kinds[case["expect"]]):
                        envelope.open_file(client, "k", path, out, b"", None)
                    self.assertFalse(os.path.exists(out))
                    if case["expect"] == "EnvelopeFormat":
                        self.assertEqual(client.asked, [], "Open called for a damaged header")


class Generator(unittest.TestCase):
    def test_checked_in_vectors_are_the_generators(self):
        sys.path.insert(0, CONTRACT_DIR)
        import make_vectors
        fresh = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        make_vectors.write(fresh)
        checked_in = os.path.join(CONTRACT_DIR, "vectors")
        names = ["vectors.json"] + [c["file"] for c in VECTORS["envelope"]["cases"]]
        self.assertEqual(sorted(os.listdir(os.path.join(fresh, "envelope"))),
                         sorted(os.listdir(os.path.join(checked_in, "envelope"))))
        _, mismatch, errors_ = filecmp.cmpfiles(fresh, checked_in, names, shallow=False)
        self.assertEqual(mismatch + errors_, [],
                         "run /usr/bin/python3 client/contract/make_vectors.py")


if __name__ == "__main__":
    unittest.main(verbosity=2)
