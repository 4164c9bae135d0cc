"""CRC32C (Castagnoli) of the bytes a call sends and receives (docs/FORMAT.md,
"Checksums"): the request carries the checksums of its payload and associated data,
the answer those of its output, and `verify` checks an answer."""
from typing import Iterable

import crc32c as _crc32c  # Debian's python3-crc32c: SSE 4.2 or slicing-by-8, in C
from google.protobuf import wrappers_pb2

from .errors import ChecksumError


def crc32c(data: bytes) -> int:
    """The CRC32C of `data`: b"123456789" gives 0xE3069283."""
    return _crc32c.crc32c(data)


def checksum(data: bytes) -> wrappers_pb2.UInt32Value:
    """The value of a request's `*_crc32c` field."""
    return wrappers_pb2.UInt32Value(value=crc32c(data))


def verify(response, fields: Iterable[str], verified: Iterable[str]) -> None:
    """Checks each of `fields` of `response` ("ciphertext", ...) against its
    FIELD_crc32c, and that each `verified` flag ("verified_plaintext_crc32c", ...) is
    set; ChecksumError otherwise."""
    name = type(response).__name__
    for field in fields:
        if crc32c(getattr(response, field)) != getattr(response, field + "_crc32c"):
            raise ChecksumError(f"{name}.{field} does not match its {field}_crc32c "
                                "(corrupted on the way?)")
    for flag in verified:
        if not getattr(response, flag):
            raise ChecksumError(f"{name}.{flag} is false: the server did not check the "
                                "checksum sent (an older server?)")
