"""Envelope files (docs/FORMAT.md, "Envelope file (0x03)"): a fresh AES-256 data key
from GenerateDataKey encrypts the file here, in 1 MiB segments; the header keeps the
data key sealed under the tenant's key. Only the sealed key (81 bytes) crosses the
network, however large the file. The CLI (`--envelope`) and the Go, Node.js and Java
libraries read and write the same files.

    header  = 0x03 | S (u32 BE) | nonce prefix (7) | L (u16 BE) | sealed data key (L)
    segment = AES-256-GCM(data key, nonce = prefix || u32 BE index || last flag,
                          AAD = header[0:12], S plaintext bytes, the last fewer)
"""
import os
from typing import BinaryIO, Optional, Tuple

import grpc
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .errors import DECRYPTION_FAILED, DecryptionFailedError, EnvelopeFormatError
from .files import OutputFile, Progress

FORMAT = 0x03
SEGMENT_SIZE = 1 << 20  # what writers use; readers take any valid S from the header
MIN_SEGMENT_SIZE, MAX_SEGMENT_SIZE = 4096, 4 << 20
MIN_SEALED_KEY, MAX_SEALED_KEY = 49, 1024
DATA_KEY_BYTES = 32
TAG_BYTES = 16


def _nonce(prefix: bytes, index: int, last: bool) -> bytes:
    if index >= 1 << 32:
        raise EnvelopeFormatError("too many segments for one envelope file")
    return prefix + index.to_bytes(4, "big") + (b"\x01" if last else b"\x00")


def _wipe(buffer: bytearray) -> None:
    # Overwrites the only copy we own. The bytes inside the response message and any
    # copies Python made cannot be reached; this is as far as Python goes.
    buffer[:] = bytes(len(buffer))


def seal_file(client, key: str, in_path: str, out_path: str, associated_data: bytes,
              progress: Optional[Progress]) -> int:
    total = os.path.getsize(in_path)  # before the call: a missing file costs nothing
    with open(in_path, "rb") as source:
        answer = client.generate_data_key(key, data_key_bytes=DATA_KEY_BYTES,
                                          associated_data=associated_data)
        data_key, sealed_key = bytearray(answer.plaintext), answer.ciphertext
        try:
            if len(data_key) != DATA_KEY_BYTES or len(sealed_key) > MAX_SEALED_KEY:
                raise EnvelopeFormatError("GenerateDataKey returned an unexpected data key")
            header = (bytes([FORMAT]) + SEGMENT_SIZE.to_bytes(4, "big") + os.urandom(7)
                      + len(sealed_key).to_bytes(2, "big") + sealed_key)
            aead, prefix, aad = AESGCM(data_key), header[5:12], header[:12]
            with OutputFile(out_path) as out:
                out.file.write(header)
                index, done = 0, 0
                while True:
                    # A short read is the end of the file and so the last segment,
                    # empty when the file is a whole number of segments long.
                    chunk = source.read(SEGMENT_SIZE)
                    last = len(chunk) < SEGMENT_SIZE
                    out.file.write(aead.encrypt(_nonce(prefix, index, last), chunk, aad))
                    done += len(chunk)
                    if progress is not None:
                        progress(done, total)
                    if last:
                        break
                    index += 1
                out.commit()
        finally:
            _wipe(data_key)  # AESGCM holds this same bytearray, not a copy
    return answer.key_version


def read_header(source: BinaryIO) -> Tuple[int, bytes, bytes, bytes]:
    """(segment size, nonce prefix, segment AAD, sealed data key) of an envelope file;
    EnvelopeFormatError when it is not one."""
    fixed = source.read(14)
    if len(fixed) < 14 or fixed[0] != FORMAT:
        raise EnvelopeFormatError("not a sealbox envelope file")
    segment_size = int.from_bytes(fixed[1:5], "big")
    sealed_length = int.from_bytes(fixed[12:14], "big")
    if (segment_size & (segment_size - 1)
            or not MIN_SEGMENT_SIZE <= segment_size <= MAX_SEGMENT_SIZE
            or not MIN_SEALED_KEY <= sealed_length <= MAX_SEALED_KEY):
        raise EnvelopeFormatError("not a sealbox envelope file")
    sealed_key = source.read(sealed_length)
    if len(sealed_key) < sealed_length:
        raise EnvelopeFormatError("not a sealbox envelope file")
    return segment_size, fixed[5:12], fixed[:12], sealed_key


def open_file(client, key: str, in_path: str, out_path: str, associated_data: bytes,
              progress: Optional[Progress]) -> int:
    total = os.path.getsize(in_path)
    with open(in_path, "rb") as source:
        segment_size, prefix, aad, sealed_key = read_header(source)
        opened = client.open(key, sealed_key, associated_data)
        data_key = bytearray(opened.plaintext)
        try:
            if len(data_key) != DATA_KEY_BYTES:
                raise EnvelopeFormatError("not a sealbox envelope file (its sealed key is "
                                          "not a data key)")
            aead = AESGCM(data_key)
            with OutputFile(out_path) as out:
                index = 0
                while True:
                    # S + 16 bytes are a full segment, never the last (a last one is
                    # shorter); fewer, at the end of the file, are the last segment.
                    segment = source.read(segment_size + TAG_BYTES)
                    last = len(segment) < segment_size + TAG_BYTES
                    try:
                        out.file.write(aead.decrypt(_nonce(prefix, index, last), segment, aad))
                    except InvalidTag:
                        raise DecryptionFailedError("decryption failed",
                                                    grpc.StatusCode.INVALID_ARGUMENT,
                                                    DECRYPTION_FAILED) from None
                    if progress is not None:
                        progress(source.tell(), total)
                    if last:
                        break
                    index += 1
                out.commit()
        finally:
            _wipe(data_key)
    return opened.key_version
