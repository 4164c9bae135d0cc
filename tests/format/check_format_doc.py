#!/usr/bin/python3
"""Checks docs/FORMAT.md from the outside.

Knows nothing of sealbox's code: it reads the worked examples in the document and,
following only the rules the document states, rebuilds the info strings, headers and
nonces, re-derives the keys, decrypts the unary example, re-seals and opens the
stream example, and re-seals the envelope example. Every value the document prints
must match.

Usage: check_format_doc.py path/to/FORMAT.md
Needs only the Python standard library and python3-cryptography.
"""

import hashlib
import re
import struct
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


def example_fields(doc, title):
    """The `name: value` lines of the ```text blocks under `### Example: <title>`.

    A line that starts with spaces continues the previous field (long hex).
    """
    section = re.search(r"^### Example: %s\n(.*?)(?=^#{1,3} )" % re.escape(title),
                        doc, re.S | re.M)
    if not section:
        sys.exit("no section '### Example: %s'" % title)
    fields, name = {}, None
    for block in re.findall(r"```text\n(.*?)```", section.group(1), re.S):
        for line in block.splitlines():
            if line.startswith(" ") and name:
                fields[name] += " " + line.strip()
            elif ":" in line:
                name, value = line.split(":", 1)
                name = name.strip()
                fields[name] = value.strip()
    return fields


class Example:
    def __init__(self, fields):
        self.fields = fields
        self.used = set()

    def raw(self, name):
        if name not in self.fields:
            sys.exit("the example lacks '%s'" % name)
        self.used.add(name)
        return self.fields[name]

    def bytes(self, name):
        """A "quoted string" as UTF-8, or hex (spaces group, mean nothing)."""
        value = self.raw(name)
        if value.startswith('"'):
            return value[1:-1].encode()
        return bytes.fromhex(value.replace(" ", ""))

    def int(self, name):
        return int(self.raw(name))

    def check_all_used(self):
        # A value the document prints but nobody checks could drift unnoticed.
        unused = set(self.fields) - self.used
        if unused:
            sys.exit("example values not checked: %s" % sorted(unused))


failures = []


def expect(what, got, want):
    if got != want:
        failures.append("%s:\n  computed %s\n  document %s" % (what, got.hex()
                        if isinstance(got, bytes) else got, want.hex()
                        if isinstance(want, bytes) else want))


def u32(n):
    return struct.pack(">I", n)


def u64(n):
    return struct.pack(">Q", n)


def name(s):
    assert len(s) <= 255
    return bytes([len(s)]) + s


def hkdf(material, salt, info):
    # "with the same length as the material"
    return HKDF(algorithm=hashes.SHA256(), length=len(material), salt=salt,
                info=info).derive(material)


def check_unary(ex):
    material = ex.bytes("key material")
    tenant, key_name = ex.bytes("tenant"), ex.bytes("key name")
    version, counter = ex.int("key version"), ex.int("counter")
    epoch_id, aad = ex.bytes("epoch id"), ex.bytes("caller AAD")
    plaintext = ex.bytes("plaintext")

    info = b"sealbox/v1/unary" + name(tenant) + name(key_name)
    expect("unary info", info, ex.bytes("info"))
    subkey = hkdf(material, epoch_id, info)
    expect("epoch subkey", subkey, ex.bytes("epoch subkey"))
    nonce = bytes(4) + u64(counter)
    expect("nonce", nonce, ex.bytes("nonce"))
    header = b"\x01" + u32(version) + epoch_id + nonce
    expect("header", header, ex.bytes("header"))
    gcm_aad = header + u64(len(aad)) + aad
    expect("GCM AAD", gcm_aad, ex.bytes("GCM AAD"))

    # Open the document's ciphertext the way the document says.
    ciphertext = ex.bytes("ciphertext")
    expect("tag", ciphertext[-16:], ex.bytes("tag"))
    if len(ciphertext) < 49 or ciphertext[0] != 0x01:
        sys.exit("unary ciphertext is malformed")
    expect("ciphertext header", ciphertext[:33], header)
    try:
        opened = AESGCM(subkey).decrypt(ciphertext[21:33], ciphertext[33:],
                                        ciphertext[:33] + u64(len(aad)) + aad)
    except InvalidTag:
        failures.append("the unary ciphertext does not decrypt")
        return
    expect("unary plaintext", opened, plaintext)
    # And a changed AAD must not decrypt.
    try:
        AESGCM(subkey).decrypt(nonce, ciphertext[33:], gcm_aad + b"x")
        failures.append("the unary ciphertext decrypts with the wrong AAD")
    except InvalidTag:
        pass


def open_stream(stream, material, tenant, key_name, aad):
    """The opening rules, as written: returns the plaintext or raises InvalidTag."""
    header, rest = stream[:48], stream[48:]
    if len(header) < 48 or header[0] != 0x02:
        raise InvalidTag()
    size = struct.unpack(">I", header[5:9])[0]
    if size & (size - 1) or not 4096 <= size <= 4194304:
        raise InvalidTag()
    info = (b"sealbox/v1/stream" + name(tenant) + name(key_name) + u64(len(aad)) +
            aad)
    gcm = AESGCM(hkdf(material, header[9:41], info))
    prefix, out, i = header[41:48], b"", 0
    while len(rest) >= size + 16:  # always a segment that is not the last
        out += gcm.decrypt(prefix + u32(i) + b"\x00", rest[:size + 16], header)
        rest, i = rest[size + 16:], i + 1
    if len(rest) < 16:
        raise InvalidTag()
    return out + gcm.decrypt(prefix + u32(i) + b"\x01", rest, header)


def check_stream(ex):
    material = ex.bytes("key material")
    tenant, key_name = ex.bytes("tenant"), ex.bytes("key name")
    version, size = ex.int("key version"), ex.int("segment size")
    aad, salt = ex.bytes("caller AAD"), ex.bytes("salt")
    prefix = ex.bytes("nonce prefix")
    # "byte i is i mod 251"
    plaintext = bytes(i % 251 for i in range(ex.int("plaintext length")))
    expect("plaintext SHA-256", hashlib.sha256(plaintext).digest(),
           ex.bytes("plaintext SHA-256"))

    header = b"\x02" + u32(version) + u32(size) + salt + prefix
    expect("stream header", header, ex.bytes("header"))
    info = (b"sealbox/v1/stream" + name(tenant) + name(key_name) + u64(len(aad)) +
            aad)
    expect("stream info", info, ex.bytes("info"))
    key = hkdf(material, salt, info)
    expect("stream key", key, ex.bytes("stream key"))

    # Seal by the segmentation rules: full segments, then a shorter last one.
    full = len(plaintext) // size
    pieces = [plaintext[i * size:(i + 1) * size] for i in range(full)]
    pieces.append(plaintext[full * size:])
    stream = header
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        nonce = prefix + u32(i) + (b"\x01" if last else b"\x00")
        expect("segment %d nonce" % i, nonce, ex.bytes("segment %d nonce" % i))
        sealed = AESGCM(key).encrypt(nonce, piece, header)
        expect("segment %d tag" % i, sealed[-16:], ex.bytes("segment %d tag" % i))
        stream += sealed
    expect("ciphertext length", len(stream), ex.int("ciphertext length"))
    expect("segment 0 first 32 bytes", stream[48:80],
           ex.bytes("segment 0 first 32 bytes"))
    expect("last 32 bytes", stream[-32:], ex.bytes("last 32 bytes"))
    expect("ciphertext SHA-256", hashlib.sha256(stream).digest(),
           ex.bytes("ciphertext SHA-256"))

    expect("stream plaintext",
           open_stream(stream, material, tenant, key_name, aad), plaintext)
    # The rules must reject a dropped last segment and a wrong AAD.
    for what, damaged, bad_aad in [
            ("without its last segment", stream[:48 + size + 16], aad),
            ("with the wrong AAD", stream, aad + b"x")]:
        try:
            open_stream(damaged, material, tenant, key_name, bad_aad)
            failures.append("the stream opens " + what)
        except InvalidTag:
            pass


def check_envelope(ex, unary):
    """The envelope example: its data key sealed as the unary example's message would
    be at the example's counter, then a file under that data key."""
    material, aad = unary.bytes("key material"), unary.bytes("caller AAD")
    epoch_id, version = unary.bytes("epoch id"), unary.int("key version")
    info = b"sealbox/v1/unary" + name(unary.bytes("tenant")) + name(unary.bytes("key name"))
    data_key = ex.bytes("data key")
    unary_header = b"\x01" + u32(version) + epoch_id + bytes(4) + u64(ex.int("counter"))
    sealed_key = unary_header + AESGCM(hkdf(material, epoch_id, info)).encrypt(
        unary_header[21:], data_key, unary_header + u64(len(aad)) + aad)
    expect("sealed data key", sealed_key, ex.bytes("sealed data key"))

    size, prefix = ex.int("segment size"), ex.bytes("nonce prefix")
    plaintext = bytes(i % 251 for i in range(ex.int("plaintext length")))
    segments_aad = b"\x03" + u32(size) + prefix
    expect("segments AAD", segments_aad, ex.bytes("segments AAD"))
    header = segments_aad + struct.pack(">H", len(sealed_key)) + sealed_key
    expect("envelope header", header, ex.bytes("header"))
    full = len(plaintext) // size
    pieces = [plaintext[i * size:(i + 1) * size] for i in range(full)]
    pieces.append(plaintext[full * size:])
    file = header
    for i, piece in enumerate(pieces):
        nonce = prefix + u32(i) + (b"\x01" if i == len(pieces) - 1 else b"\x00")
        expect("envelope segment %d nonce" % i, nonce, ex.bytes("segment %d nonce" % i))
        sealed = AESGCM(data_key).encrypt(nonce, piece, segments_aad)
        expect("envelope segment %d tag" % i, sealed[-16:], ex.bytes("segment %d tag" % i))
        file += sealed
    expect("file length", len(file), ex.int("file length"))
    expect("file SHA-256", hashlib.sha256(file).digest(), ex.bytes("file SHA-256"))


def main():
    doc = open(sys.argv[1], encoding="utf-8").read()
    unary = Example(example_fields(doc, "unary ciphertext"))
    check_unary(unary)
    unary.check_all_used()
    stream = Example(example_fields(doc, "stream ciphertext"))
    check_stream(stream)
    stream.check_all_used()
    envelope = Example(example_fields(doc, "envelope file"))
    check_envelope(envelope, unary)
    envelope.check_all_used()
    if failures:
        sys.exit("docs/FORMAT.md disagrees with its own rules:\n" +
                 "\n".join(failures))
    print("docs/FORMAT.md: the three worked examples check out")


if __name__ == "__main__":
    main()
