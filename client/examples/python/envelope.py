#!/usr/bin/python3
"""Envelope files: encrypt a file of any size locally under a fresh data key from
GenerateDataKey, keeping the sealed data key in the file's header. Only the 81-byte
sealed key goes to the service, however large the file. The format is
docs/FORMAT.md's "Envelope file (0x03)"; the sealbox CLI (--envelope) and the Node.js
and Go examples read and write the same files.

    SEALBOX_TOKEN=... /usr/bin/python3 envelope.py seal|open --key NAME [--aad TEXT] \\
        IN OUT [HOST:PORT] [--proto-dir DIR]

As a module (with stubs from seal_open.load_stubs, whose sealbox.v1.data_pb2 this
imports): seal_file(stub, auth, key, in_path, out_path, associated_data=b"") and
open_file(...), each returning the key version of the sealed data key.

    header  = 0x03 | S (u32 BE) | nonce prefix (7) | L (u16 BE) | sealed data key (L)
    segment = AES-256-GCM(data key, nonce = prefix || u32 BE index || last flag,
                          AAD = header[0:12], S plaintext bytes, the last fewer)
"""
import argparse
import os
import sys
import tempfile

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from sealbox_crc32c import ChecksumError, checksum, verify

FORMAT = 0x03
SEGMENT_SIZE = 1 << 20  # what writers use; readers take any valid S from the header
MIN_SEGMENT_SIZE, MAX_SEGMENT_SIZE = 4096, 4 << 20
MIN_SEALED_KEY, MAX_SEALED_KEY = 49, 1024
DATA_KEY_BYTES = 32
TAG_BYTES = 16
CALL_TIMEOUT = 60  # seconds, for each of the (two at most) calls


class EnvelopeError(Exception):
    """The input is not an envelope file, or does not verify."""


def _nonce(prefix, index, last):
    if index >= 1 << 32:
        raise EnvelopeError("too many segments for one envelope file")
    return prefix + index.to_bytes(4, "big") + (b"\x01" if last else b"\x00")


def _wipe(buffer):
    # Overwrites the only copy we own. The bytes in the response message and any
    # copies Python made cannot be reached; this is as far as Python goes.
    buffer[:] = bytes(len(buffer))


class _OutputFile:
    """A temporary file beside `path`, renamed to it only by commit(): on any failure it
    is removed and `path` is left as it was. Created 0600, as it may hold plaintext."""

    def __init__(self, path):
        self.path = path
        folder = os.path.dirname(os.path.abspath(path))
        fd, self.temp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.",
                                         suffix=".tmp")
        self.file = os.fdopen(fd, "wb")

    def commit(self):
        self.file.flush()
        os.fsync(self.file.fileno())  # the data is on disk before the name points at it
        self.file.close()
        os.replace(self.temp, self.path)

    def __enter__(self):
        return self

    def __exit__(self, kind, *_):
        if kind is not None:
            self.file.close()
            os.unlink(self.temp)


def seal_file(stub, auth, key, in_path, out_path, associated_data=b""):
    """Seals in_path into the envelope file out_path under the tenant's key `key`; the
    same associated_data must be given to open it. Returns the key version."""
    from sealbox.v1 import data_pb2
    with open(in_path, "rb") as source:  # before the call: a missing file costs nothing
        response = stub.GenerateDataKey(data_pb2.GenerateDataKeyRequest(
            key=key, data_key_bytes=DATA_KEY_BYTES, include_plaintext=True,
            associated_data=associated_data,
            associated_data_crc32c=checksum(associated_data)),
            metadata=auth, timeout=CALL_TIMEOUT)
        verify(response, ["plaintext", "ciphertext"], ["verified_associated_data_crc32c"])
        data_key, sealed_key = bytearray(response.plaintext), response.ciphertext
        try:
            if len(data_key) != DATA_KEY_BYTES or len(sealed_key) > MAX_SEALED_KEY:
                raise EnvelopeError("GenerateDataKey returned an unexpected data key")
            header = (bytes([FORMAT]) + SEGMENT_SIZE.to_bytes(4, "big") + os.urandom(7)
                      + len(sealed_key).to_bytes(2, "big") + sealed_key)
            aead, prefix, aad = AESGCM(data_key), header[5:12], header[:12]
            with _OutputFile(out_path) as out:
                out.file.write(header)
                index = 0
                while True:
                    # A short read means the end of the file: that is the last segment,
                    # empty when the file is a whole number of segments long.
                    chunk = source.read(SEGMENT_SIZE)
                    last = len(chunk) < SEGMENT_SIZE
                    out.file.write(aead.encrypt(_nonce(prefix, index, last), chunk, aad))
                    if last:
                        break
                    index += 1
                out.commit()
        finally:
            _wipe(data_key)  # AESGCM holds this same bytearray, not a copy
    return response.key_version


def _read_header(source):
    """(segment size, nonce prefix, AAD, sealed key) from an envelope file's header."""
    fixed = source.read(14)
    if len(fixed) < 14 or fixed[0] != FORMAT:
        raise EnvelopeError("not a sealbox envelope file")
    segment_size = int.from_bytes(fixed[1:5], "big")
    sealed_length = int.from_bytes(fixed[12:14], "big")
    if (segment_size & (segment_size - 1)
            or not MIN_SEGMENT_SIZE <= segment_size <= MAX_SEGMENT_SIZE
            or not MIN_SEALED_KEY <= sealed_length <= MAX_SEALED_KEY):
        raise EnvelopeError("not a sealbox envelope file")
    sealed_key = source.read(sealed_length)
    if len(sealed_key) < sealed_length:
        raise EnvelopeError("not a sealbox envelope file")
    return segment_size, fixed[5:12], fixed[:12], sealed_key


def open_file(stub, auth, key, in_path, out_path, associated_data=b""):
    """Opens the envelope file in_path into out_path, which appears only once the whole
    file verified. Returns the key version of its sealed data key."""
    from sealbox.v1 import data_pb2
    with open(in_path, "rb") as source:
        segment_size, prefix, aad, sealed_key = _read_header(source)
        response = stub.Open(data_pb2.OpenRequest(
            key=key, ciphertext=sealed_key, associated_data=associated_data,
            ciphertext_crc32c=checksum(sealed_key),
            associated_data_crc32c=checksum(associated_data)),
            metadata=auth, timeout=CALL_TIMEOUT)
        verify(response, ["plaintext"],
               ["verified_ciphertext_crc32c", "verified_associated_data_crc32c"])
        data_key = bytearray(response.plaintext)
        try:
            if len(data_key) != DATA_KEY_BYTES:
                raise EnvelopeError("not a sealbox envelope file (its sealed key is not "
                                    "a data key)")
            aead = AESGCM(data_key)
            with _OutputFile(out_path) as out:
                index = 0
                while True:
                    # S + 16 bytes are a full segment, never the last (a last one is
                    # shorter); fewer, at the end of the file, are the last segment.
                    segment = source.read(segment_size + TAG_BYTES)
                    last = len(segment) < segment_size + TAG_BYTES
                    try:
                        out.file.write(aead.decrypt(_nonce(prefix, index, last), segment, aad))
                    except InvalidTag:
                        raise EnvelopeError("decryption failed") from None
                    if last:
                        break
                    index += 1
                out.commit()
        finally:
            _wipe(data_key)
    return response.key_version


def main():
    import grpc
    from seal_open import load_stubs

    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(
        description="Seal or open an envelope file (docs/FORMAT.md). The tenant token is "
                    "read from SEALBOX_TOKEN.")
    parser.add_argument("command", choices=["seal", "open"],
                        help="seal: encrypt IN into the envelope file OUT; open: the reverse")
    parser.add_argument("input", metavar="IN")
    parser.add_argument("output", metavar="OUT", help="written only once complete (and "
                        "verified, for open)")
    parser.add_argument("server", metavar="HOST:PORT", nargs="?", default="127.0.0.1:50051",
                        help="the sealbox server, plaintext gRPC (default: %(default)s)")
    parser.add_argument("--key", required=True, help="key name of the caller's tenant")
    parser.add_argument("--aad", default="", help="associated data (text), needed to open")
    parser.add_argument("--proto-dir", default=os.path.join(here, "../../../proto"))
    args = parser.parse_args()
    token = os.environ.get("SEALBOX_TOKEN")
    if not token:
        sys.exit("envelope.py: set SEALBOX_TOKEN to a tenant token")

    _, data_grpc = load_stubs(args.proto_dir)
    stub = data_grpc.CryptoStub(grpc.insecure_channel(args.server))
    auth = [("authorization", f"Bearer {token}")]
    run = seal_file if args.command == "seal" else open_file
    try:
        version = run(stub, auth, args.key, args.input, args.output, args.aad.encode())
    except grpc.RpcError as err:
        sys.exit(f"envelope.py: {err.code().name}: {err.details()}")
    except (EnvelopeError, ChecksumError, OSError) as err:
        sys.exit(f"envelope.py: {err}")
    print(f"{args.command}: {args.input} -> {args.output} (key version {version}), OK")


if __name__ == "__main__":
    main()
