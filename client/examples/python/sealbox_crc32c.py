"""CRC32C checksums for sealbox's data-plane calls (docs/FORMAT.md, "Checksums").

A request carries the CRC32C of the bytes it sends (the server refuses it with
INVALID_ARGUMENT "checksum mismatch" if they arrived different) and a response the
CRC32C of the bytes it returns, which `verify` checks here. Pure Python, a byte at a
time: Debian 12's python3-crc32c is not among the packages tools/dev installs, and the
examples only checksum unary payloads (at most about 1 MiB).
"""
from google.protobuf import wrappers_pb2


def _make_table():
    # Castagnoli's polynomial, reflected (iSCSI, RFC 3720).
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _make_table()


def crc32c(data):
    """The CRC32C of `data` (bytes-like) as an int: b"123456789" gives 0xE3069283."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def checksum(data):
    """The value of a request's *_crc32c field (a google.protobuf.UInt32Value)."""
    return wrappers_pb2.UInt32Value(value=crc32c(data))


class ChecksumError(Exception):
    """A response whose bytes do not match its checksum, or that says the server did
    not check one the request carried."""


def verify(response, fields, verified):
    """Checks each of `fields` of `response` ("ciphertext", ...) against its FIELD_crc32c,
    and that each `verified` flag ("verified_plaintext_crc32c", ...) is set."""
    name = type(response).__name__
    for field in fields:
        if crc32c(getattr(response, field)) != getattr(response, field + "_crc32c"):
            raise ChecksumError(f"{name}.{field} does not match its {field}_crc32c "
                                "(corrupted on the way?)")
    for flag in verified:
        if not getattr(response, flag):
            raise ChecksumError(f"{name}.{flag} is false: the server did not check the "
                                "checksum sent (an older server?)")
