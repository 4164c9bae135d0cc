#!/usr/bin/python3
"""Writes client/contract/vectors/: the static cases every client library must
accept or reject alike, without a server (README.md beside this file).

    /usr/bin/python3 client/contract/make_vectors.py [OUT_DIR]   (default: vectors/ here)

Deterministic (fixed keys, nonce prefixes and plaintexts), so the Python contract
test runs it again and fails when the checked-in files differ from its output.
Needs Debian's python3-cryptography. The numbers come from contract.json.
"""
import hashlib
import json
import os
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "contract.json")) as f:
    CONTRACT = json.load(f)
ENV = CONTRACT["envelope"]
ERRORS = CONTRACT["errors"]

DATA_KEY = bytes(range(0x40, 0x40 + ENV["dataKeyBytes"]))
PREFIX = bytes.fromhex("a1a2a3a4a5a6a7")[:ENV["noncePrefixBytes"]]
SEALED_KEY = bytes((7 * i + 3) & 0xFF for i in range(81))  # what Open is asked to open
S = ENV["minSegmentBytes"]  # small segments keep the files small


def plaintext(n):
    return bytes((i * 31 + 7) & 0xFF for i in range(n))


def header(segment_bytes=S, sealed_key=SEALED_KEY, fmt=ENV["format"], length=None):
    length = len(sealed_key) if length is None else length
    return (bytes([fmt]) + segment_bytes.to_bytes(4, "big") + PREFIX
            + length.to_bytes(2, "big") + sealed_key)


def segments(head, data, segment_bytes=S):
    """The sealed segments of data under DATA_KEY, as a list (the last one short)."""
    aead, aad, out = AESGCM(DATA_KEY), head[:ENV["segmentAadBytes"]], []
    for index in range(len(data) // segment_bytes + 1):
        chunk = data[index * segment_bytes:(index + 1) * segment_bytes]
        last = index == len(data) // segment_bytes
        nonce = PREFIX + index.to_bytes(4, "big") + bytes([ENV["lastSegmentFlag"] if last else 0])
        out.append(aead.encrypt(nonce, chunk, aad))
    return out


def envelope_cases():
    """(name, file bytes, expected: "ok" or an error case, plaintext when ok, why)."""
    h = header()
    p10k = plaintext(10000)
    s10k = segments(h, p10k)
    p8k = plaintext(2 * S)
    s8k = segments(h, p8k)
    flipped = bytearray(h + b"".join(s10k))
    flipped[len(h) + S + 16 + 5] ^= 0x01
    bad_tag = bytearray(h + b"".join(s10k))
    bad_tag[-1] ^= 0x80
    other_prefix = bytearray(h + b"".join(s10k))
    other_prefix[ENV["noncePrefixOffset"]] ^= 0x01
    other_size = bytearray(h + b"".join(s10k))
    other_size[1:5] = (2 * S).to_bytes(4, "big")
    short_key = bytes(range(ENV["minSealedKeyBytes"]))
    h_big = header(segment_bytes=ENV["maxSegmentBytes"])
    ok, failed, damaged = "ok", "DecryptionFailed", "EnvelopeFormat"
    return [
        ("empty-plaintext", h + b"".join(segments(h, b"")), ok, b"",
         "no data: the header and one empty last segment (its tag alone)"),
        ("short", h + b"".join(segments(h, plaintext(100))), ok, plaintext(100),
         "one last segment"),
        ("three-segments", h + b"".join(s10k), ok, p10k, "two full segments and a short last one"),
        ("whole-segments", h + b"".join(s8k), ok, p8k,
         "a multiple of S: two full segments and an empty last one"),
        ("max-segment-size", h_big + b"".join(segments(h_big, plaintext(300), ENV["maxSegmentBytes"])),
         ok, plaintext(300), "S = the largest allowed"),
        ("shortest-sealed-key",
         header(sealed_key=short_key) + b"".join(segments(header(sealed_key=short_key), plaintext(5))),
         ok, plaintext(5), "L = the smallest allowed"),
        ("last-segment-dropped", h + b"".join(s10k[:2]), failed, None,
         "truncated at a segment boundary: no last segment"),
        ("empty-last-segment-dropped", h + b"".join(s8k[:2]), failed, None,
         "a multiple of S without its empty last segment"),
        ("cut-mid-segment", h + s10k[0] + s10k[1][:1000], failed, None,
         "truncated inside the second segment"),
        ("cut-in-last-tag", h + s10k[0] + s10k[1] + s10k[2][:10], failed, None,
         "the last piece shorter than a tag"),
        ("header-only", h, failed, None, "a whole header and no segment at all"),
        ("bit-flipped", bytes(flipped), failed, None, "one bit changed in the second segment"),
        ("tag-flipped", bytes(bad_tag), failed, None, "one bit changed in the last tag"),
        ("nonce-prefix-changed", bytes(other_prefix), failed, None,
         "the header's nonce prefix changed (it is in every segment's nonce and AAD)"),
        ("segment-size-changed", bytes(other_size), failed, None,
         "S changed to another valid size (it is in every segment's AAD)"),
        ("segments-swapped", h + s10k[1] + s10k[0] + s10k[2], failed, None,
         "the first two segments in the other order"),
        ("bytes-appended", h + b"".join(s10k) + b"extra", failed, None,
         "five bytes after the last segment"),
        ("segment-repeated", h + s10k[0] + s10k[0] + s10k[1] + s10k[2], failed, None,
         "the first segment twice"),
        ("empty-file", b"", damaged, None, "nothing at all"),
        ("short-fixed-header", h[:10], damaged, None, "cut inside the fixed header"),
        ("short-sealed-key", h[:ENV["fixedHeaderBytes"] + 40], damaged, None,
         "cut inside the sealed data key"),
        ("unary-format-byte", header(fmt=0x01) + b"".join(s10k), damaged, None,
         "format byte 0x01, not an envelope"),
        ("segment-size-not-power-of-two", header(segment_bytes=5000), damaged, None,
         "S = 5000"),
        ("segment-size-too-small", header(segment_bytes=ENV["minSegmentBytes"] // 2), damaged,
         None, "S below the smallest allowed"),
        ("segment-size-too-large", header(segment_bytes=ENV["maxSegmentBytes"] * 2), damaged,
         None, "S above the largest allowed"),
        ("segment-size-zero", header(segment_bytes=0), damaged, None, "S = 0"),
        ("sealed-key-too-short",
         header(sealed_key=bytes(ENV["minSealedKeyBytes"] - 1)) + b"".join(s10k), damaged, None,
         "L below the smallest allowed"),
        ("sealed-key-too-long",
         header(sealed_key=bytes(ENV["maxSealedKeyBytes"] + 1)) + b"".join(s10k), damaged, None,
         "L above the largest allowed"),
    ]


# ---- google.rpc.Status blobs, encoded by hand (field numbers as in the .proto files:
# Status{code=1, message=2, details=3}, Any{type_url=1, value=2},
# ErrorInfo{reason=1, domain=2, metadata=3 (map entries {key=1, value=2})}).

def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, value):
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(number << 3 | 2) + varint(len(value)) + value


def error_info(reason, domain, metadata=(), domain_first=False):
    parts = [field(1, reason), field(2, domain)]
    if domain_first:
        parts.reverse()
    for key, value in metadata:
        parts.append(field(3, field(1, key) + field(2, value)))
    return b"".join(parts)


def any_of(type_url, value):
    return field(1, type_url) + field(2, value)


def status(code, message, *details):
    return field(1, code) + field(2, message) + b"".join(field(3, d) for d in details)


def status_cases():
    """(name, serialized google.rpc.Status, whether it marks a failed decryption, why)."""
    info_type, domain = ERRORS["errorInfoType"], ERRORS["domain"]
    failed = "DECRYPTION_FAILED"
    invalid = 3
    server = status(invalid, "decryption failed", any_of(info_type, error_info(failed, domain)))
    debug = any_of("type.googleapis.com/google.rpc.DebugInfo", field(2, "detail"))
    return [
        ("server", server, True, "what the server sends for a failed decryption"),
        ("with-metadata", status(invalid, "decryption failed", any_of(
            info_type, error_info(failed, domain, [("key", "default"), ("version", "3")]))),
         True, "ErrorInfo with metadata entries"),
        ("after-other-detail", status(invalid, "decryption failed", debug,
                                      any_of(info_type, error_info(failed, domain))),
         True, "another detail before the ErrorInfo"),
        ("domain-first", status(invalid, "decryption failed", any_of(
            info_type, error_info(failed, domain, domain_first=True))),
         True, "ErrorInfo's fields in the other order"),
        ("details-only", field(3, any_of(info_type, error_info(failed, domain))), True,
         "no code or message, only the detail"),
        ("other-domain", status(invalid, "decryption failed", any_of(
            info_type, error_info(failed, "example.com"))), False, "another service's reason"),
        ("other-reason", status(invalid, "key disabled", any_of(
            info_type, error_info("KEY_DISABLED", domain))), False, "another reason of ours"),
        ("other-type", status(invalid, "decryption failed", any_of(
            "type.googleapis.com/google.rpc.DebugInfo", error_info(failed, domain))),
         False, "the same bytes under another type URL"),
        ("no-details", status(invalid, "bad request"), False, "code and message only"),
        ("empty", b"", False, "no bytes at all"),
        ("truncated", server[:-3], False, "the server's blob cut by three bytes"),
        ("bad-wire-type", b"\x1f\x00\x00", False, "field 3 with wire type 7"),
    ]


def item_error_cases():
    """A batch item's ItemError{code, message, reason}: the class each library raises."""
    number = ERRORS["itemReasonNumbers"]["DECRYPTION_FAILED"]
    return [
        {"code": "INVALID_ARGUMENT", "reason": number, "expect": "DECRYPTION_FAILED"},
        {"code": "INVALID_ARGUMENT", "reason": 0, "expect": "INVALID_ARGUMENT"},
        {"code": "NOT_FOUND", "reason": 0, "expect": "NOT_FOUND"},
        {"code": "PERMISSION_DENIED", "reason": 0, "expect": "PERMISSION_DENIED"},
        {"code": "FAILED_PRECONDITION", "reason": 0, "expect": "FAILED_PRECONDITION"},
        {"code": "RESOURCE_EXHAUSTED", "reason": 0, "expect": "RESOURCE_EXHAUSTED"},
    ]


def write(out_dir):
    os.makedirs(os.path.join(out_dir, "envelope"), exist_ok=True)
    envelope = []
    for name, data, expect, plain, why in envelope_cases():
        with open(os.path.join(out_dir, "envelope", name + ".sbx"), "wb") as f:
            f.write(data)
        case = {"file": f"envelope/{name}.sbx", "expect": expect, "why": why}
        if plain is not None:
            case["plaintextSha256"] = hashlib.sha256(plain).hexdigest()
            case["plaintextBytes"] = len(plain)
        envelope.append(case)
    index = {
        "about": "Written by client/contract/make_vectors.py; do not edit by hand.",
        "envelope": {
            "dataKey": DATA_KEY.hex(),
            "about": "Open of the sealed data key in each file's header gives dataKey; "
                     "expect: ok (the plaintext's SHA-256), EnvelopeFormat (the library's "
                     "envelope format error) or DecryptionFailed (its failed decryption)",
            "cases": envelope,
        },
        "statusDetails": {
            "about": "grpc-status-details-bin values: whether each marks a failed decryption",
            "cases": [{"name": n, "hex": b.hex(), "decryptionFailed": d, "why": w}
                      for n, b, d, w in status_cases()],
        },
        "itemErrors": {
            "about": "a batch item's ItemError: expect names the errors.fromServer row "
                     "(its code, or DECRYPTION_FAILED for the reason)",
            "cases": item_error_cases(),
        },
    }
    with open(os.path.join(out_dir, "vectors.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    write(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "vectors"))
