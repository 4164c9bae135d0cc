"""Files through the streams: the input read in 1 MiB chunks as the call goes, the
output written beside its target and renamed into place only when complete."""
import os
import tempfile
from typing import BinaryIO, Callable, Iterator, Optional

from . import streams
from .streams import CHUNK_BYTES, StreamAnswer

Progress = Callable[[int, Optional[int]], None]
"""progress(bytes done, total bytes or None): called as a file goes through."""


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


def _write_answer(answer: StreamAnswer, out_path: str) -> int:
    """Writes a stream's answer to out_path, in place only once it ended well."""
    with OutputFile(out_path) as out:
        for chunk in answer:
            out.file.write(chunk)
        out.commit()
    return answer.key_version or 0


def seal_file(client, key, in_path, out_path, associated_data, segment_size, progress,
              timeout) -> int:
    open(in_path, "rb").close()  # a missing input fails here, before any call
    return _write_answer(streams.seal_stream(
        client, key, associated_data, segment_size, timeout,
        lambda: read_chunks(in_path, progress), True), out_path)


def open_file(client, key, in_path, out_path, associated_data, progress, timeout) -> int:
    open(in_path, "rb").close()
    return _write_answer(streams.open_stream(
        client, key, associated_data, timeout, lambda: read_chunks(in_path, progress), True),
        out_path)
