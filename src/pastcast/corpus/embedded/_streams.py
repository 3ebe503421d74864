"""Files read and written front to back a chunk at a time, never mapped, so that a build's merge
holds a few chunks per partition whatever the corpus size: pages read through a mapping stay
counted in the process's memory as long as it is mapped. A reader reopens its file for each chunk,
so thousands of them need no open handle each."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
_FORMAT = np.lib.format


class NpyReader:
    """The 1-D array of a ``.npy`` file, taken in order ``take(count)`` values at a time."""

    def __init__(self, path: Path) -> None:
        with path.open("rb") as fh:
            version = _FORMAT.read_magic(fh)
            read = (
                _FORMAT.read_array_header_1_0
                if version == (1, 0)
                else _FORMAT.read_array_header_2_0
            )
            shape, _, self._dtype = read(fh)
            self._start = fh.tell()
        self.path, self.length, self.at = path, int(np.prod(shape)), 0

    def take(self, count: int) -> Any:
        count = min(count, self.length - self.at)
        with self.path.open("rb") as fh:
            fh.seek(self._start + self.at * self._dtype.itemsize)
            values = np.fromfile(fh, dtype=self._dtype, count=count)
        self.at += count
        return values


class LineReader:
    """The lines of a file, taken in order ``take(count)`` at a time."""

    def __init__(self, path: Path) -> None:
        self.path, self._offset = path, 0

    def take(self, count: int) -> list[bytes]:
        with self.path.open("rb") as fh:
            fh.seek(self._offset)
            lines = []
            while len(lines) < count and (line := fh.readline()):
                lines.append(line)
            self._offset = fh.tell()
        return lines


class NpyWriter:
    """A 1-D int64 ``.npy`` file written front to back; its length is set on ``close`` (numpy
    pads the header so that rewriting it with any length keeps its size)."""

    def __init__(self, path: Path) -> None:
        self._fh = path.open("wb")
        self.count = 0
        self._header()

    def _header(self) -> None:
        shape = {"descr": "<i8", "fortran_order": False, "shape": (self.count,)}
        _FORMAT.write_array_header_1_0(self._fh, shape)

    def write(self, values: Iterable[int] | I64) -> None:
        array = np.asarray(values, dtype="<i8")
        self._fh.write(array.tobytes())
        self.count += len(array)

    def close(self) -> None:
        self._fh.seek(0)
        self._header()
        self._fh.close()


@contextlib.contextmanager
def npy_writer(path: Path) -> Iterator[NpyWriter]:
    writer = NpyWriter(path)
    try:
        yield writer
    finally:
        writer.close()
