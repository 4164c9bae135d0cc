"""Files through the streams: the input read in 1 MiB chunks as the call goes, the
output written beside its target and renamed into place only when complete."""
import os
import tempfile
from typing import BinaryIO, Callable, Iterator, Optional

from .streams import CHUNK_BYTES, call_stream
from .v1 import data_pb2

Progress = Callable[[int, Optional[int]], None]


class OutputFile:
    """A temporary file (mode 0600) beside `path`, renamed to it by commit() after an
    fsync; on any failure it is removed and `path` is left as it was."""

    def __init__(self, path: str):
        self.path = path
        folder = os.path.dirname(os.path.abspath(path))
        fd, self.temp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.",
                                         suffix=".sealbox")
        self.file: BinaryIO = os.fdopen(fd, "wb")

    def commit(self) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())  # the data is on disk before the name points at it
        self.file.close()
        os.replace(self.temp, self.path)

    def __enter__(self) -> "OutputFile":
        return self

    def __exit__(self, kind, *_) -> None:
        if kind is not None:
            self.file.close()
            os.unlink(self.temp)


def read_chunks(path: str, progress: Optional[Progress]) -> Iterator[bytes]:
    """The file's bytes in CHUNK_BYTES pieces, reporting progress as each is sent."""
    total = os.path.getsize(path)
    done = 0
    if progress is not None:
        progress(0, total)
    with open(path, "rb") as source:
        while True:
            chunk = source.read(CHUNK_BYTES)
            if not chunk:
                return
            yield chunk
            done += len(chunk)
            if progress is not None:
                progress(done, total)


def _through_stream(client, method, request_type, chunk_field, answer_field, start,
                    in_path: str, out_path: str, progress: Optional[Progress],
                    timeout: Optional[float]) -> int:
    open(in_path, "rb").close()  # a missing input fails here, before any call
    answer = call_stream(client, method, request_type, chunk_field, answer_field, start,
                         lambda: read_chunks(in_path, progress), True, timeout)
    with OutputFile(out_path) as out:
        for chunk in answer:
            out.file.write(chunk)
        out.commit()
    return answer.key_version or 0


def seal_file(client, key, in_path, out_path, associated_data, segment_size, progress,
              timeout) -> int:
    start = data_pb2.StreamStart(key=key, associated_data=associated_data,
                                 segment_size=segment_size)
    return _through_stream(client, client._stub.SealStream, data_pb2.SealStreamRequest,
                           "plaintext_chunk", "ciphertext_chunk", start, in_path, out_path,
                           progress, timeout)


def open_file(client, key, in_path, out_path, associated_data, progress, timeout) -> int:
    start = data_pb2.StreamStart(key=key, associated_data=associated_data)
    return _through_stream(client, client._stub.OpenStream, data_pb2.OpenStreamRequest,
                           "ciphertext_chunk", "plaintext_chunk", start, in_path, out_path,
                           progress, timeout)
