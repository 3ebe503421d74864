"""numpy's ``.npy`` and ``.npz`` files, safe to read from many threads at once.

numpy parses every array's header with ``ast.literal_eval``. CPython before 3.11.8 and 3.12.1
keeps the AST constructor's recursion depth in interpreter-wide state, so two threads parsing
at once can fail with ``SystemError: AST constructor recursion depth mismatch`` (CPython
gh-106905): runner threads opening one index's maps did. Every header here is parsed under one
lock; headers are a few hundred bytes, so threads wait microseconds, and array data is read
outside it.
"""

from __future__ import annotations

import mmap
import threading
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["drop_pages", "load_npy", "load_npz"]

_HEADERS = threading.Lock()


def load_npy(path: str | Path, *, mmap: bool = True) -> np.ndarray[Any, Any]:
    """The array in the ``.npy`` file ``path``: mapped read-only, or (``mmap=False``) read into
    memory. Never unpickles."""
    with _HEADERS:
        mapped: np.ndarray[Any, Any] = np.load(path, mmap_mode="r", allow_pickle=False)
    return mapped if mmap else np.array(mapped)


def load_npz(path: str | Path) -> dict[str, np.ndarray[Any, Any]]:
    """Every array of the ``.npz`` file ``path``, read into memory. Never unpickles."""
    with _HEADERS, np.load(path, allow_pickle=False) as saved:
        return {name: saved[name] for name in saved.files}


def drop_pages(array: np.ndarray[Any, Any]) -> None:
    """Unmap the pages of a mapped ``array`` this process has touched (the file's pages stay in
    the page cache and are read back on the next touch): a pass over every row of a large file
    would otherwise keep the whole file in the process's resident set."""
    mapped = getattr(array, "_mmap", None)
    if mapped is not None and hasattr(mapped, "madvise"):
        mapped.madvise(mmap.MADV_DONTNEED)
