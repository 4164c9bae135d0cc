"""SealStream and OpenStream: the caller's chunks go out while the answers come back,
so memory stays at a few chunks whatever the stream's length (gRPC's flow control
paces the reading of the chunks)."""
import time
from typing import Callable, Iterable, Iterator, Optional, Tuple, Union

import grpc

from .errors import from_rpc_error
from .retry import NO_RETRY, with_retries
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


def from_memory(chunks: Chunks) -> Tuple[Callable[[], Chunks], bool]:
    """The input of a stream from memory, and whether it can be sent again (bytes can,
    an iterable the caller gave cannot)."""
    return (lambda: chunks), isinstance(chunks, (bytes, bytearray, memoryview))


def _call(client, method, request_type, chunk_field: str, answer_field: str, start,
          chunks_for_attempt: Callable[[], Chunks], replayable: bool,
          timeout: Optional[float]) -> StreamAnswer:
    """Starts a stream call and returns its answer. When the input can be read again
    (`replayable`), an UNAVAILABLE before the first answer starts it again, as the
    client's retry policy allows; after the first answer, never."""
    client._renewal.maybe_renew(client)
    deadline = None if timeout is None else time.monotonic() + timeout

    def first_answer(remaining: Optional[float]):
        """Sends the stream and waits for its first answer: (it or None, the rest)."""
        responses = method(
            _requests(request_type, start, chunk_field, chunks_for_attempt()),
            metadata=client._metadata(), timeout=remaining)
        try:
            return next(responses), responses
        except StopIteration:
            return None, responses
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None

    def answers() -> Iterator:
        first, rest = with_retries(client.retry if replayable else NO_RETRY, deadline,
                                   first_answer)
        if first is not None:
            yield first
            yield from rest

    return StreamAnswer(answers(), answer_field)


def seal_stream(client, key: str, associated_data: bytes, segment_size: int,
                timeout: Optional[float], chunks_for_attempt: Callable[[], Chunks],
                replayable: bool) -> StreamAnswer:
    """SealStream of what chunks_for_attempt() gives, once per attempt."""
    start = data_pb2.StreamStart(key=key, associated_data=associated_data,
                                 segment_size=segment_size)
    return _call(client, client._stub.SealStream, data_pb2.SealStreamRequest,
                 "plaintext_chunk", "ciphertext_chunk", start, chunks_for_attempt,
                 replayable, timeout)


def open_stream(client, key: str, associated_data: bytes, timeout: Optional[float],
                chunks_for_attempt: Callable[[], Chunks], replayable: bool) -> StreamAnswer:
    """OpenStream of what chunks_for_attempt() gives, once per attempt."""
    start = data_pb2.StreamStart(key=key, associated_data=associated_data)
    return _call(client, client._stub.OpenStream, data_pb2.OpenStreamRequest,
                 "ciphertext_chunk", "plaintext_chunk", start, chunks_for_attempt,
                 replayable, timeout)
