"""The exceptions the client raises: one base class, one subclass per case a program
acts on differently (docs/CLIENTS.md, "Errors").

A failed decryption is recognised from the status details the server attaches (a
google.rpc.ErrorInfo with domain "sealbox.v1" and reason "DECRYPTION_FAILED"), never
from the message text.
"""
from typing import Dict, Optional, Tuple, Type

import grpc

ERROR_DOMAIN = "sealbox.v1"
DECRYPTION_FAILED = "DECRYPTION_FAILED"
_STATUS_DETAILS_KEY = "grpc-status-details-bin"
_ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"


class SealboxError(Exception):
    """Any failure of a sealbox call: `code` is the gRPC status code (None for a
    failure found here, such as a bad checksum), `message` the server's text."""

    def __init__(self, message: str, code: Optional[grpc.StatusCode] = None,
                 reason: str = ""):
        super().__init__(f"{code.name}: {message}" if code else message)
        self.code = code
        self.message = message
        self.reason = reason  # the ErrorInfo reason, when the server gave one


class DecryptionFailedError(SealboxError):
    """The ciphertext did not authenticate: the wrong key, other associated data, or
    a changed or truncated ciphertext, all alike. Never retried: each one counts
    against the key's decryption-failure limit on the server."""


class ChecksumError(SealboxError):
    """An answer whose bytes do not match its CRC32C, or that does not confirm the
    checksum the request carried; nothing from it is returned. Code DATA_LOSS."""

    def __init__(self, message: str):
        super().__init__(message, grpc.StatusCode.DATA_LOSS)


class EnvelopeFormatError(SealboxError):
    """The input is not a sealbox envelope file, or its header is damaged. Code
    INVALID_ARGUMENT."""

    def __init__(self, message: str):
        super().__init__(message, grpc.StatusCode.INVALID_ARGUMENT)


class UnauthenticatedError(SealboxError):
    """No token, or an unknown, revoked or expired one."""


class PermissionDeniedError(SealboxError):
    """Outside the token's scope (operation or key), or the admin token was sent."""


class NotFoundError(SealboxError):
    """The tenant has no key of that name."""


class InvalidArgumentError(SealboxError):
    """A malformed request (other than a failed decryption), or a checksum the server
    found wrong ("checksum mismatch")."""


class FailedPreconditionError(SealboxError):
    """The key or key version is disabled, or the token cannot be renewed."""


class ResourceExhaustedError(SealboxError):
    """Too many failed authentications from this address, or a message too large."""


class UnavailableError(SealboxError):
    """The server is starting, stopping or unreachable, or its keystore is stale: safe
    to try again (the client already did, see RetryPolicy)."""


class DeadlineExceededError(SealboxError):
    """The call's deadline passed (it covers every attempt of a retried call)."""


_BY_CODE: Dict[grpc.StatusCode, Type[SealboxError]] = {
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
}
_CODE_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}


def error_for(code: grpc.StatusCode, message: str, reason: str = "") -> SealboxError:
    """The exception for a status: DecryptionFailedError when `reason` says so, else
    the class of `code` (SealboxError itself for the codes without one)."""
    if reason == DECRYPTION_FAILED:
        return DecryptionFailedError(message, code, reason)
    return _BY_CODE.get(code, SealboxError)(message, code, reason)


def from_rpc_error(error: grpc.RpcError) -> SealboxError:
    """The exception for a failed call, its reason read from the status details."""
    reason = ""
    for key, value in error.trailing_metadata() or ():
        if key == _STATUS_DETAILS_KEY:
            reason = _sealbox_reason(value)
    return error_for(error.code(), error.details() or "", reason)


def from_item_error(item_error) -> SealboxError:
    """The exception for one failed item of a batch call (a sealbox.v1.ItemError)."""
    code = _CODE_BY_NUMBER.get(item_error.code, grpc.StatusCode.UNKNOWN)
    reason = DECRYPTION_FAILED if item_error.reason == 1 else ""
    return error_for(code, item_error.message, reason)


# ---- google.rpc.Status, read by hand: Debian 12 packages no Python googleapis protos,
# and only three fields matter (Status.details = 3, Any.type_url = 1, Any.value = 2,
# ErrorInfo.reason = 1, ErrorInfo.domain = 2).

def _fields(data: bytes):
    """(field number, value) of each varint or length-delimited field of a message."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, position = _varint(data, position)
        elif wire_type == 2:
            length, position = _varint(data, position)
            value, position = data[position:position + length], position + length
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
            value, position = data[position:position + size], position + size
        else:
            raise ValueError("unsupported wire type")
        yield number, value


def _varint(data: bytes, position: int) -> Tuple[int, int]:
    value, shift = 0, 0
    while True:
        if position >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
        shift += 7


def _sealbox_reason(status_bytes: bytes) -> str:
    """The reason of the first ErrorInfo of domain sealbox.v1 in a google.rpc.Status."""
    try:
        for number, detail in _fields(status_bytes):
            if number != 3:
                continue
            any_fields = dict(_fields(detail))
            if any_fields.get(1, b"").decode() != _ERROR_INFO_TYPE:
                continue
            info = dict(_fields(any_fields.get(2, b"")))
            if info.get(2, b"").decode() == ERROR_DOMAIN:
                return info.get(1, b"").decode()
    except (ValueError, UnicodeDecodeError):
        pass  # damaged details: the code alone decides
    return ""
