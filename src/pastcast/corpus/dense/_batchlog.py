"""The checkpoint of an embedding job: one append-only file of finished batches, a record each
(``HEADER``, then the rows as little-endian float32s), trusted only whole and with its checksum.
A writer thread fsyncs once for all the records queued meanwhile (a file a batch cost about
3 ms each on this disk)."""

from __future__ import annotations

import mmap
import os
import queue
import struct
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from pastcast.corpus.dense._embedders import F32

LOG_NAME = "batches.bin"
HEADER = struct.Struct("<4sqiiI")  # magic, first ordinal, rows, dimension, CRC-32 of the rows
MAGIC = b"PCB1"


def _records(data: bytes | mmap.mmap) -> Iterator[tuple[int, int, int, int]]:
    """``(offset of the rows, first ordinal, rows, dim)`` of each whole, intact record, in file
    order, up to the first that is not."""
    at, end = 0, len(data)
    while at + HEADER.size <= end:
        magic, lo, rows, dim, crc = HEADER.unpack_from(data, at)
        start = at + HEADER.size
        size = 4 * rows * dim
        if magic != MAGIC or lo < 0 or rows < 1 or dim < 1 or start + size > end:
            return
        if zlib.crc32(memoryview(data)[start : start + size]) != crc:
            return
        yield start, lo, rows, dim
        at = start + size


class BatchLog:
    """A job's finished batches: those stored by earlier runs (``stored``, ``read``), and
    ``append`` for new ones; ``close`` waits for the writer and raises what it hit."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOG_NAME
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        self._file = os.fdopen(fd, "r+b", buffering=0)
        size = os.fstat(fd).st_size
        self._map = mmap.mmap(fd, size, access=mmap.ACCESS_READ) if size else None
        self.stored: dict[int, tuple[int, int, int]] = {}  # lo -> (offset, rows, dim)
        good = 0
        for start, lo, rows, dim in _records(self._map if self._map is not None else b""):
            self.stored[lo] = (start, rows, dim)  # a batch stored again: the later one
            good = start + 4 * rows * dim
        if good < size:  # a record cut short by a crash: appends go after the last good one
            self._file.truncate(good)
        self._file.seek(good)
        self._queue: queue.SimpleQueue[tuple[int, F32] | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._writer = threading.Thread(target=self._write, name="embed-keep", daemon=True)
        self._writer.start()

    def read(self, lo: int) -> F32:
        """The stored rows of the batch at ``lo`` (a copy)."""
        start, rows, dim = self.stored[lo]
        assert self._map is not None
        flat = np.frombuffer(self._map, dtype="<f4", count=rows * dim, offset=start)
        return flat.reshape(rows, dim).astype(np.float32)  # a copy: the map closes with the log

    def append(self, lo: int, vectors: F32) -> None:
        """Store a finished batch (in the background; ``close`` waits for it); raises what the
        writer hit before, so that a job whose batches can no longer be kept stops."""
        if self._error is not None:
            raise self._error
        self._queue.put((lo, vectors))

    def _write(self) -> None:
        while True:
            item = self._queue.get()
            items = [item]
            while item is not None:  # everything queued meanwhile goes under one fsync
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                items.append(item)
            if self._error is None:
                try:
                    for got in items:
                        if got is not None:
                            self._file.write(_record(*got))
                    os.fsync(self._file.fileno())
                except BaseException as exc:  # raised by close, in the job's thread
                    self._error = exc
            if items[-1] is None:
                return

    def close(self) -> None:
        if self._writer.is_alive():
            self._queue.put(None)
            self._writer.join()
        if self._map is not None:
            self._map.close()
            self._map = None
        self._file.close()
        if self._error is not None:
            raise self._error


def _record(lo: int, vectors: F32) -> bytes:
    rows = np.ascontiguousarray(vectors, dtype="<f4")
    payload = rows.tobytes()
    return HEADER.pack(MAGIC, lo, rows.shape[0], rows.shape[1], zlib.crc32(payload)) + payload
