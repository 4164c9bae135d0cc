"""sealbox: the Python client of the sealbox encryption service.

    from sealbox import Client

    with Client("127.0.0.1:50051", token=token) as client:
        sealed = client.seal("default", b"hello")
        assert client.open("default", sealed.ciphertext).plaintext == b"hello"

Every data-plane call (unary, batch, streams, files, envelope files, data keys, token
renewal), CRC32C on every unary call, safe retries, and exceptions a program can act
on: docs/clients/PYTHON.md, and help(sealbox.Client).
"""
from .checksums import crc32c
from .client import (BatchItem, BatchResult, Client, DataKey, Opened, RenewedToken,
                     Rewrapped, Sealed)
from .errors import (ChecksumError, DeadlineExceededError, DecryptionFailedError,
                     EnvelopeFormatError, FailedPreconditionError, InvalidArgumentError,
                     NotFoundError, PermissionDeniedError, ResourceExhaustedError,
                     SealboxError, UnauthenticatedError, UnavailableError)
from .retry import NO_RETRY, RetryPolicy
from .streams import StreamAnswer

__version__ = "0.1.0"
__all__ = [
    "BatchItem", "BatchResult", "ChecksumError", "Client", "DataKey", "DeadlineExceededError",
    "DecryptionFailedError", "EnvelopeFormatError", "FailedPreconditionError",
    "InvalidArgumentError", "NO_RETRY", "NotFoundError", "Opened", "PermissionDeniedError",
    "RenewedToken", "ResourceExhaustedError", "RetryPolicy", "Rewrapped", "Sealed",
    "SealboxError", "StreamAnswer", "UnauthenticatedError", "UnavailableError", "crc32c",
]
