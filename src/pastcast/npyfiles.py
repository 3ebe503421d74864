"""numpy's ``.npy`` and ``.npz`` files, safe to read from many threads at once.

numpy parses every array's header with ``ast.literal_eval``. CPython before 3.11.8 and 3.12.1
keeps the AST constructor's recursion depth in interpreter-wide state, so two threads parsing
at once can fail with ``SystemError: AST constructor recursion depth mismatch`` (CPython
gh-106905): runner threads opening one index's maps did. Every header here is parsed under one
lock; headers are a few hundred bytes, so threads wait microseconds, and array data is read
outside it.
"""

from __future__ import annotations

import mmap as _mmap  # ``load_npy``'s argument is named ``mmap``
import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

__all__ = [
    "NpyReader",
    "NpyWriter",
    "drop_pages",
    "load_npy",
    "load_npz",
    "map_file",
    "prefetch_rows",
]

_HEADERS = threading.Lock()
_FORMAT = np.lib.format
_PLAIN_SIZE = 128
_PLAIN = re.compile(  # version 1.0, a 118-byte header: what np.save writes for plain numbers
    rb"\x93NUMPY\x01\x00\x76\x00\{'descr': '([<>|][biuf]\d{1,2})', 'fortran_order': (True|False), "
    rb"'shape': \(((?:\d+, ?)*\d*)\), \} *\n"
)


def load_npy(
    path: str | Path, *, mmap: bool = True, scattered: bool = False
) -> np.ndarray[Any, Any]:
    """The array in the ``.npy`` file ``path``: mapped read-only (one ``mmap`` over the parsed
    header, where ``np.memmap`` costs ~0.4 ms an array), or (``mmap=False``) read into memory.
    Never unpickles. ``scattered``: page faults read only their page (``MADV_RANDOM``), not
    the pages around it, for a mapping read a few rows at a time."""
    if not mmap:
        with _HEADERS:
            return np.load(path, allow_pickle=False)  # type: ignore[no-any-return]
    with open(path, "rb") as fh:
        parsed = _plain_header(fh.read(_PLAIN_SIZE))
        if parsed is None:  # any other header (or none): numpy's reader, its parse locked
            with _HEADERS:
                array: np.ndarray[Any, Any] = np.load(path, mmap_mode="r", allow_pickle=False)
        else:  # numbers only: nothing to unpickle
            shape, fortran, dtype = parsed
            pages = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ)
            # shape, dtype, buffer, offset, strides, order
            array = np.ndarray(shape, dtype, pages, _PLAIN_SIZE, None, "F" if fortran else "C")
    if scattered:
        _scatter(_mapping(array))
    return array


def map_file(path: str | Path, *, scattered: bool = False) -> memoryview | bytes:
    """A file's bytes, mapped read-only (an empty file, which cannot be mapped: ``b""``);
    ``scattered`` as for ``load_npy``."""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return b""
        pages = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ)
    if scattered:
        _scatter(pages)
    return memoryview(pages)


def _scatter(mapping: _mmap.mmap | None) -> None:
    """Page faults in ``mapping`` read their page only, not the device's read-ahead around it."""
    if mapping is not None and hasattr(_mmap, "MADV_RANDOM"):
        mapping.madvise(_mmap.MADV_RANDOM)


def _mapping(array: np.ndarray[Any, Any]) -> _mmap.mmap | None:
    """The memory map under ``array`` (a view's base is the array it views), if any."""
    base = array.base
    while isinstance(base, np.ndarray):
        base = base.base
    return base if isinstance(base, _mmap.mmap) else None


def _plain_header(head: bytes) -> tuple[tuple[int, ...], bool, np.dtype[Any]] | None:
    """The header ``np.save`` writes for an array of numbers, parsed without ``ast`` (a tenth
    of the time, and no lock): None for any other."""
    found = _PLAIN.fullmatch(head)
    if found is None:
        return None
    descr, fortran, dims = found.groups()
    shape = tuple(int(d) for d in dims.split(b",") if d.strip())
    return shape, fortran == b"True", np.dtype(descr.decode())


def load_npz(path: str | Path) -> dict[str, np.ndarray[Any, Any]]:
    """Every array of the ``.npz`` file ``path``, read into memory. Never unpickles."""
    with _HEADERS, np.load(path, allow_pickle=False) as saved:
        return {name: saved[name] for name in saved.files}


def drop_pages(array: np.ndarray[Any, Any]) -> None:
    """Unmap the pages of a mapped ``array`` this process has touched (the file's pages stay in
    the page cache and are read back on the next touch): a pass over every row of a large file
    would otherwise keep the whole file in the process's resident set."""
    mapping = _mapping(array)
    if mapping is not None and hasattr(mapping, "madvise"):
        mapping.madvise(_mmap.MADV_DONTNEED)


def prefetch_rows(array: np.ndarray[Any, Any], spans: Iterable[tuple[int, int]]) -> None:
    """Ask for the pages of rows ``lo:hi`` of ``array`` (mapped by ``load_npy``), for each
    (lo, hi) of ``spans``, at once: reads of pages the page cache has lost overlap, where each
    page fault waits for its own."""
    mapping = _mapping(array)
    if mapping is None or not hasattr(_mmap, "MADV_WILLNEED") or not array.size:
        return
    # the rows' offsets in the mapping: the array's first byte less the mapping's
    start = array.ctypes.data - np.frombuffer(mapping, dtype=np.uint8, count=1).ctypes.data
    size = array.strides[0]
    for lo, hi in spans:
        at = start + lo * size
        page = at - at % _mmap.PAGESIZE
        mapping.madvise(_mmap.MADV_WILLNEED, page, start + hi * size - page)


class NpyReader:
    """The 1-D array of a ``.npy`` file, taken in order ``take(count)`` values at a time."""

    def __init__(self, path: Path) -> None:
        with _HEADERS, path.open("rb") as fh:
            v1 = _FORMAT.read_magic(fh) == (1, 0)
            header = _FORMAT.read_array_header_1_0 if v1 else _FORMAT.read_array_header_2_0
            shape, _, self._dtype = header(fh)
            self._start = fh.tell()
        self.path, self.length, self.at = path, int(np.prod(shape)), 0

    def take(self, count: int) -> Any:
        count = min(count, self.length - self.at)
        with self.path.open("rb") as fh:
            fh.seek(self._start + self.at * self._dtype.itemsize)
            self.at += count
            return np.fromfile(fh, dtype=self._dtype, count=count)


class NpyWriter:
    """A 1-D int64 ``.npy`` file written front to back, its length set on exit (numpy pads the
    header so that it keeps its size whatever the length)."""

    def __init__(self, path: Path) -> None:
        self._fh, self.count = path.open("wb"), 0
        self._header()

    def _header(self) -> None:
        meta = {"descr": "<i8", "fortran_order": False, "shape": (self.count,)}
        _FORMAT.write_array_header_1_0(self._fh, meta)

    def write(self, values: Iterable[int] | Any) -> None:
        array = np.asarray(values, dtype="<i8")
        self._fh.write(array.tobytes())
        self.count += len(array)

    def __enter__(self) -> NpyWriter:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._fh.seek(0)
        self._header()
        self._fh.close()
