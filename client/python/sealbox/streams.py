"""SealStream and OpenStream: the caller's chunks go out while the answers come back,
so memory stays at a few chunks whatever the stream's length (gRPC's flow control
paces the reading of the chunks)."""
import time
from typing import Callable, Iterable, Iterator, Optional, Union

import grpc

from .errors import DeadlineExceededError, UnavailableError, from_rpc_error
from .retry import NO_RETRY
from .v1 import data_pb2

CHUNK_BYTES = 1 << 20  # what bytes input is cut into: the size the server handles best
Chunks = Union[bytes, Iterable[bytes]]


class StreamAnswer:
    """The answer of a stream call: iterate over it for the output's bytes, in order.
    `key_version` is known once the first bytes arrived."""

    def __init__(self, responses: Iterator, field: str):
        self._responses = responses
        self._field = field
        self.key_version: Optional[int] = None

    def __iter__(self) -> Iterator[bytes]:
        try:
            for response in self._responses:
                self.key_version = response.key_version
                chunk = getattr(response, self._field)
                if chunk:
                    yield chunk
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None


def _pieces(chunks: Chunks) -> Iterator[bytes]:
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        view = memoryview(chunks)
        for offset in range(0, len(view), CHUNK_BYTES):
            yield bytes(view[offset:offset + CHUNK_BYTES])
    else:
        yield from chunks


def _requests(request_type, start, chunk_field: str, chunks: Chunks):
    yield request_type(start=start)
    for piece in _pieces(chunks):
        if piece:
            yield request_type(**{chunk_field: piece})


def call_stream(client, method, request_type, chunk_field: str, answer_field: str,
                start, chunks_for_attempt: Callable[[], Chunks], replayable: bool,
                timeout: Optional[float]) -> StreamAnswer:
    """Starts a stream call and returns its answer. When the input can be read again
    (`replayable`), an UNAVAILABLE before the first answer starts it again, as the
    client's retry policy allows; after the first answer, never."""
    client._renewal.maybe_renew(client)
    policy = client.retry if replayable else NO_RETRY
    deadline = None if timeout is None else time.monotonic() + timeout

    def attempts() -> Iterator:
        number = 1
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise DeadlineExceededError("the call's deadline passed before it was sent",
                                            grpc.StatusCode.DEADLINE_EXCEEDED)
            responses = method(
                _requests(request_type, start, chunk_field, chunks_for_attempt()),
                metadata=client._metadata(), timeout=remaining)
            try:
                first = next(responses)
            except StopIteration:
                return
            except grpc.RpcError as error:
                failure = from_rpc_error(error)
                pause = policy.backoff(number)
                if (not isinstance(failure, UnavailableError) or number >= policy.max_attempts
                        or (deadline is not None and time.monotonic() + pause >= deadline)):
                    raise
                time.sleep(pause)
                number += 1
                continue
            yield first
            yield from responses
            return

    return StreamAnswer(attempts(), answer_field)


def seal_stream(client, key: str, chunks: Chunks, associated_data: bytes,
                segment_size: int, timeout: Optional[float]) -> StreamAnswer:
    start = data_pb2.StreamStart(key=key, associated_data=associated_data,
                                 segment_size=segment_size)
    replayable = isinstance(chunks, (bytes, bytearray, memoryview))
    return call_stream(client, client._stub.SealStream, data_pb2.SealStreamRequest,
                       "plaintext_chunk", "ciphertext_chunk", start, lambda: chunks,
                       replayable, timeout)


def open_stream(client, key: str, chunks: Chunks, associated_data: bytes,
                timeout: Optional[float]) -> StreamAnswer:
    start = data_pb2.StreamStart(key=key, associated_data=associated_data)
    replayable = isinstance(chunks, (bytes, bytearray, memoryview))
    return call_stream(client, client._stub.OpenStream, data_pb2.OpenStreamRequest,
                       "ciphertext_chunk", "plaintext_chunk", start, lambda: chunks,
                       replayable, timeout)

