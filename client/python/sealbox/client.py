"""The sealbox client: one gRPC channel to a sealbox server and every data-plane call.

    from sealbox import Client

    with Client("127.0.0.1:50051", token=os.environ["SEALBOX_TOKEN"]) as client:
        sealed = client.seal("default", b"card 4111", associated_data=b"user:42")
        opened = client.open("default", sealed.ciphertext, associated_data=b"user:42")
"""
import dataclasses
import datetime
import ipaddress
import threading
import time
from typing import Callable, Iterable, List, Optional, Sequence, Union

import grpc
from google.protobuf import duration_pb2

from . import envelope, files, streams
from .checksums import checksum, verify
from .errors import FailedPreconditionError, SealboxError, from_item_error, from_rpc_error
from .retry import NO_RETRY, RetryPolicy, with_retries
from .v1 import data_pb2, data_pb2_grpc

DEFAULT_TIMEOUT = 30.0  # seconds, for unary and batch calls; streams have none
# The largest answer a stream sends is one segment (4 MiB at most) and its framing.
_MAX_RECEIVE_BYTES = 8 << 20
_RENEW_RETRY_SECONDS = 5.0  # after a failed renewal
_MAX_RECONNECT_BACKOFF_MS = 1000

Progress = files.Progress


@dataclasses.dataclass(frozen=True)
class Sealed:
    ciphertext: bytes
    key_version: int


@dataclasses.dataclass(frozen=True)
class Opened:
    plaintext: bytes
    key_version: int


@dataclasses.dataclass(frozen=True)
class Rewrapped:
    ciphertext: bytes
    key_version: int
    previous_key_version: int


@dataclasses.dataclass(frozen=True)
class DataKey:
    """A fresh data key: `plaintext` (empty unless asked for) for local encryption,
    `ciphertext` (sealed under the tenant's key) to store beside the data."""
    plaintext: bytes
    ciphertext: bytes
    key_version: int


@dataclasses.dataclass(frozen=True)
class RenewedToken:
    token: str
    token_id: str
    expire_time: datetime.datetime


@dataclasses.dataclass(frozen=True)
class BatchItem:
    """One item of a batch call: the key, the plaintext (seal) or ciphertext (open,
    rewrap), and its associated data."""
    key: str
    data: bytes
    associated_data: bytes = b""


@dataclasses.dataclass(frozen=True)
class BatchResult:
    """One item's outcome: `value` (Sealed, Opened or Rewrapped) or `error`."""
    value: Union[Sealed, Opened, Rewrapped, None]
    error: Optional[SealboxError]

    @property
    def ok(self) -> bool:
        return self.error is None


def _is_loopback(address: str) -> bool:
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0] if not address.startswith("[") else address[1:address.find("]")]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _read(path: Optional[str]) -> Optional[bytes]:
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


class Client:
    """A connection to one sealbox server (or a load balancer in front of several).

    Plaintext gRPC to loopback addresses; TLS to any other, against the system roots or
    `ca_file`, with a client certificate for mutual TLS (`cert_file`, `key_file`);
    `server_name` when the certificate names another host; `insecure=True` for
    plaintext to another host. `token` goes out as `authorization: Bearer <token>`
    (omit it when a client certificate identifies the tenant).

    `timeout` is each unary and batch call's deadline in seconds (None: none), covering
    all its attempts; `retry` says how UNAVAILABLE is retried where that is safe.

    `renew_token=True` renews the token with RenewToken before it expires: once less
    than a third of its life is left (`token_expires_at`, a datetime or POSIX time,
    if known; else at the first call), then uses the successor, and passes it to
    `on_token_renewed(RenewedToken)` so the program can keep it.

    Safe to share between threads.
    """

    def __init__(self, address: str = "127.0.0.1:50051", token: Optional[str] = None, *,
                 ca_file: Optional[str] = None, cert_file: Optional[str] = None,
                 key_file: Optional[str] = None, server_name: Optional[str] = None,
                 insecure: bool = False, timeout: Optional[float] = DEFAULT_TIMEOUT,
                 retry: RetryPolicy = RetryPolicy(), renew_token: bool = False,
                 token_expires_at: Union[datetime.datetime, float, None] = None,
                 on_token_renewed: Optional[Callable[[RenewedToken], None]] = None,
                 channel_options: Sequence = ()):
        options = [("grpc.max_receive_message_length", _MAX_RECEIVE_BYTES),
                   ("grpc.primary_user_agent", "sealbox-python"),
                   # gRPC backs off up to 120 s between reconnection attempts by
                   # default, failing every call meanwhile: a server restarted in a
                   # second would stay unreachable for seconds more. Try every second.
                   ("grpc.initial_reconnect_backoff_ms", 100),
                   ("grpc.min_reconnect_backoff_ms", 100),
                   ("grpc.max_reconnect_backoff_ms", _MAX_RECONNECT_BACKOFF_MS),
                   # And after a failed connection gRPC Python waits out the resolver's
                   # cool-down (30 s by default) before it connects again: a server
                   # back in a second stayed unreachable for 4 s more here; with 250 ms,
                   # a few tenths.
                   ("grpc.dns_min_time_between_resolutions_ms", 250)]
        if server_name:
            options.append(("grpc.ssl_target_name_override", server_name))
        options.extend(channel_options)
        use_tls = bool(ca_file or cert_file) or not (insecure or _is_loopback(address))
        if use_tls:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read(ca_file), private_key=_read(key_file),
                certificate_chain=_read(cert_file))
            self._channel = grpc.secure_channel(address, credentials, options)
        else:
            self._channel = grpc.insecure_channel(address, options)
        self._stub = data_pb2_grpc.CryptoStub(self._channel)
        self.address = address
        self.timeout = timeout
        self.retry = retry
        self._token = token
        self._renewal = _Renewal(renew_token, token_expires_at, on_token_renewed)
        self._lock = threading.Lock()

    # ---- lifetime

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_) -> None:
        self.close()

    @property
    def token(self) -> Optional[str]:
        """The token in use: the one given, or its latest successor."""
        with self._lock:
            return self._token

    # ---- unary calls

    def seal(self, key: str, plaintext: bytes, associated_data: bytes = b"", *,
             timeout: Optional[float] = None) -> Sealed:
        """Seals `plaintext` (at most the server's --max-unary-bytes, 1 MiB by default)
        under the newest version of `key`; `associated_data` must be given again to
        open it."""
        request = data_pb2.SealRequest(
            key=key, plaintext=plaintext, associated_data=associated_data,
            plaintext_crc32c=checksum(plaintext),
            associated_data_crc32c=checksum(associated_data))
        response = self._unary(self._stub.Seal, request, timeout)
        verify(response, ["ciphertext"],
               ["verified_plaintext_crc32c", "verified_associated_data_crc32c"])
        return Sealed(response.ciphertext, response.key_version)

    def open(self, key: str, ciphertext: bytes, associated_data: bytes = b"", *,
             timeout: Optional[float] = None) -> Opened:
        """Opens a unary ciphertext; DecryptionFailedError if it does not authenticate."""
        request = data_pb2.OpenRequest(
            key=key, ciphertext=ciphertext, associated_data=associated_data,
            ciphertext_crc32c=checksum(ciphertext),
            associated_data_crc32c=checksum(associated_data))
        response = self._unary(self._stub.Open, request, timeout)
        verify(response, ["plaintext"],
               ["verified_ciphertext_crc32c", "verified_associated_data_crc32c"])
        return Opened(response.plaintext, response.key_version)

    def rewrap(self, key: str, ciphertext: bytes, associated_data: bytes = b"", *,
               timeout: Optional[float] = None) -> Rewrapped:
        """Moves a unary ciphertext to the newest version of `key`, without the
        plaintext leaving the server."""
        request = data_pb2.RewrapRequest(
            key=key, ciphertext=ciphertext, associated_data=associated_data,
            ciphertext_crc32c=checksum(ciphertext),
            associated_data_crc32c=checksum(associated_data))
        response = self._unary(self._stub.Rewrap, request, timeout)
        verify(response, ["ciphertext"],
               ["verified_ciphertext_crc32c", "verified_associated_data_crc32c"])
        return Rewrapped(response.ciphertext, response.key_version,
                         response.previous_key_version)

    def generate_data_key(self, key: str, *, data_key_bytes: int = 32,
                          associated_data: bytes = b"", include_plaintext: bool = True,
                          timeout: Optional[float] = None) -> DataKey:
        """A fresh data key for local (envelope) encryption, sealed under `key`."""
        request = data_pb2.GenerateDataKeyRequest(
            key=key, data_key_bytes=data_key_bytes, associated_data=associated_data,
            include_plaintext=include_plaintext,
            associated_data_crc32c=checksum(associated_data))
        response = self._unary(self._stub.GenerateDataKey, request, timeout)
        verify(response, ["plaintext", "ciphertext"], ["verified_associated_data_crc32c"])
        return DataKey(response.plaintext, response.ciphertext, response.key_version)

    def renew_token(self, ttl: Union[datetime.timedelta, float, None] = None, *,
                    timeout: Optional[float] = None) -> RenewedToken:
        """Asks for a successor of the token in use (lasting `ttl`, or as long as the
        current one was issued for) and uses it from now on. Not retried: a repeat
        could mint a successor nobody holds. The old token works until its expiry."""
        request = data_pb2.RenewTokenRequest()
        if ttl is not None:
            seconds = ttl.total_seconds() if isinstance(ttl, datetime.timedelta) else ttl
            request.ttl.CopyFrom(duration_pb2.Duration(seconds=int(seconds)))
        response = self._unary(self._stub.RenewToken, request, timeout, retry=NO_RETRY,
                               renew=False)
        renewed = RenewedToken(response.token, response.token_id,
                               response.expire_time.ToDatetime(datetime.timezone.utc))
        with self._lock:
            self._token = renewed.token
        self._renewal.renewed(renewed)
        return renewed

    # ---- batch calls

    def seal_batch(self, items: Sequence[BatchItem], *,
                   timeout: Optional[float] = None) -> List[BatchResult]:
        """Seals 1-1000 items in one call; each result holds its Sealed or its error."""
        request = data_pb2.SealBatchRequest(items=[
            data_pb2.SealRequest(key=i.key, plaintext=i.data, associated_data=i.associated_data,
                                 plaintext_crc32c=checksum(i.data),
                                 associated_data_crc32c=checksum(i.associated_data))
            for i in items])
        response = self._unary(self._stub.SealBatch, request, timeout)
        return [_batch_result(r, ["ciphertext"], ["verified_plaintext_crc32c"],
                              lambda r: Sealed(r.ciphertext, r.key_version))
                for r in response.results]

    def open_batch(self, items: Sequence[BatchItem], *,
                   timeout: Optional[float] = None) -> List[BatchResult]:
        """Opens 1-1000 unary ciphertexts in one call; a failed one is a
        DecryptionFailedError in its result, the others are unaffected."""
        request = data_pb2.OpenBatchRequest(items=[
            data_pb2.OpenRequest(key=i.key, ciphertext=i.data, associated_data=i.associated_data,
                                 ciphertext_crc32c=checksum(i.data),
                                 associated_data_crc32c=checksum(i.associated_data))
            for i in items])
        response = self._unary(self._stub.OpenBatch, request, timeout)
        return [_batch_result(r, ["plaintext"], ["verified_ciphertext_crc32c"],
                              lambda r: Opened(r.plaintext, r.key_version))
                for r in response.results]

    def rewrap_batch(self, items: Sequence[BatchItem], *,
                     timeout: Optional[float] = None) -> List[BatchResult]:
        """Rewraps 1-1000 unary ciphertexts in one call."""
        request = data_pb2.RewrapBatchRequest(items=[
            data_pb2.RewrapRequest(key=i.key, ciphertext=i.data,
                                   associated_data=i.associated_data,
                                   ciphertext_crc32c=checksum(i.data),
                                   associated_data_crc32c=checksum(i.associated_data))
            for i in items])
        response = self._unary(self._stub.RewrapBatch, request, timeout)
        return [_batch_result(r, ["ciphertext"], ["verified_ciphertext_crc32c"],
                              lambda r: Rewrapped(r.ciphertext, r.key_version,
                                                  r.previous_key_version))
                for r in response.results]

    # ---- streams and files (streams.py, files.py, envelope.py)

    def seal_stream(self, key: str, chunks: Union[bytes, Iterable[bytes]],
                    associated_data: bytes = b"", *, segment_size: int = 0,
                    timeout: Optional[float] = None) -> "streams.StreamAnswer":
        """SealStream: yields the stream ciphertext's bytes as they arrive, while
        `chunks` (bytes, or an iterable of bytes of any sizes up to 4 MiB) is sent.
        Memory stays at a few chunks. Retried only when `chunks` is bytes."""
        return streams.seal_stream(self, key, associated_data, segment_size, timeout,
                                   *streams.from_memory(chunks))

    def open_stream(self, key: str, chunks: Union[bytes, Iterable[bytes]],
                    associated_data: bytes = b"", *,
                    timeout: Optional[float] = None) -> "streams.StreamAnswer":
        """OpenStream: yields verified plaintext as it arrives. Keep it aside until the
        iteration ends without an exception (DecryptionFailedError when the stream is
        damaged or truncated: what came before it verified, but the whole did not)."""
        return streams.open_stream(self, key, associated_data, timeout,
                                   *streams.from_memory(chunks))

    def seal_file(self, key: str, in_path: str, out_path: str, associated_data: bytes = b"",
                  *, segment_size: int = 0, progress: Optional[Progress] = None,
                  timeout: Optional[float] = None) -> int:
        """Seals the file `in_path` through SealStream into `out_path` (written beside
        it, fsync'd, renamed when complete). Returns the key version."""
        return files.seal_file(self, key, in_path, out_path, associated_data, segment_size,
                               progress, timeout)

    def open_file(self, key: str, in_path: str, out_path: str, associated_data: bytes = b"",
                  *, progress: Optional[Progress] = None,
                  timeout: Optional[float] = None) -> int:
        """Opens the stream ciphertext `in_path` into `out_path`, which appears only
        once the whole stream verified. Returns the key version."""
        return files.open_file(self, key, in_path, out_path, associated_data, progress,
                               timeout)

    def seal_envelope_file(self, key: str, in_path: str, out_path: str,
                           associated_data: bytes = b"", *,
                           progress: Optional[Progress] = None) -> int:
        """Seals `in_path` into the envelope file `out_path` (docs/FORMAT.md, 0x03): a
        data key from GenerateDataKey encrypts it here; only the sealed key crosses the
        network. Returns the key version of the sealed data key."""
        return envelope.seal_file(self, key, in_path, out_path, associated_data, progress)

    def open_envelope_file(self, key: str, in_path: str, out_path: str,
                           associated_data: bytes = b"", *,
                           progress: Optional[Progress] = None) -> int:
        """Opens the envelope file `in_path` into `out_path`, which appears only once
        every segment verified. Returns the key version of its sealed data key."""
        return envelope.open_file(self, key, in_path, out_path, associated_data, progress)

    # ---- plumbing shared with streams.py

    def _metadata(self):
        token = self.token
        return [("authorization", f"Bearer {token}")] if token else []

    def _deadline(self, timeout: Optional[float]) -> Optional[float]:
        seconds = self.timeout if timeout is None else timeout
        return None if seconds is None else time.monotonic() + seconds

    def _unary(self, method, request, timeout: Optional[float], *,
               retry: Optional[RetryPolicy] = None, renew: bool = True):
        if renew:
            self._renewal.maybe_renew(self)

        def attempt(remaining: Optional[float]):
            try:
                return method(request, metadata=self._metadata(), timeout=remaining)
            except grpc.RpcError as error:
                raise from_rpc_error(error) from None

        return with_retries(retry or self.retry, self._deadline(timeout), attempt)


def _batch_result(result, fields, flags, make) -> BatchResult:
    """One batch item's BatchResult: its error, or its answer checked and converted."""
    which = result.WhichOneof("result")
    if which == "error":
        return BatchResult(None, from_item_error(result.error))
    answer = getattr(result, which)
    verify(answer, fields, flags)
    return BatchResult(make(answer), None)


class _Renewal:
    """When to renew the token: once less than a third of its life is left."""

    def __init__(self, enabled: bool, expires_at, on_renewed):
        self.enabled = enabled
        if isinstance(expires_at, datetime.datetime):
            expires_at = expires_at.timestamp()
        # When to renew; None: at the first call, which tells the expiry.
        self.renew_at = None if expires_at is None else _two_thirds_to(expires_at)
        self.on_renewed = on_renewed
        self.lock = threading.Lock()

    def maybe_renew(self, client: Client) -> None:
        if not self.enabled:
            return
        if self.renew_at is not None and time.time() < self.renew_at:
            return
        with self.lock:  # one renewal at a time; the others go on with the old token
            if self.renew_at is not None and time.time() < self.renew_at:
                return
            try:
                client.renew_token()
            except FailedPreconditionError:
                self.enabled = False  # a token without an expiry: nothing to renew
            except SealboxError:
                # Tried again in a few seconds; the old token works until it expires.
                self.renew_at = time.time() + _RENEW_RETRY_SECONDS

    def renewed(self, renewed: RenewedToken) -> None:
        self.renew_at = _two_thirds_to(renewed.expire_time.timestamp())
        if self.on_renewed is not None:
            self.on_renewed(renewed)


def _two_thirds_to(expires_at: float) -> float:
    """The time two thirds of the way from now to `expires_at` (POSIX seconds)."""
    return expires_at - (expires_at - time.time()) / 3
