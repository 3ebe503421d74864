"""Thread and author look-ups for the embedded index, under the same cutoff as search.

Two maps are kept, each as a sorted key list and, per key, the global ordinals of its documents
in ascending order: ``thread_id -> ordinals`` and ``author -> ordinals``. Ordinals number the
documents by (timestamp, id), so the documents of a key visible at a cutoff are a prefix of its
ordinals (one bisection against ``count_before``), already in time order; every returned
document's own timestamp is checked once more before it is returned.

The maps are written at build time to ``threads/`` in the index directory (after the index
itself, atomically; they name the content hash of the index they belong to). An index opened
without them (an earlier build, or held in memory) computes them on first use.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from pastcast import safejson
from pastcast.corpus._protocol import DocumentNotVisible
from pastcast.cutoff import as_utc, is_visible
from pastcast.records import Document

if TYPE_CHECKING:
    from pastcast.corpus.embedded._arrays import IndexArrays

__all__ = ["KeyMap", "ThreadLookups", "ThreadMaps"]

I64 = npt.NDArray[np.int64]
FOLDER = "threads"
FORMAT = "pastcast-thread-maps"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class KeyMap:
    """Ordinals grouped by key: ``ords[offsets[i]:offsets[i + 1]]`` belong to ``keys[i]``."""

    keys: list[str]
    offsets: I64
    ords: I64
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {k: i for i, k in enumerate(self.keys)})

    def ordinals(self, key: str) -> I64:
        i = self.index.get(key)
        if i is None:
            return np.zeros(0, dtype=np.int64)
        return self.ords[int(self.offsets[i]) : int(self.offsets[i + 1])]

    @classmethod
    def group(cls, pairs: dict[str, int], key_of: array[int], ordinal: array[int]) -> KeyMap:
        """Group (key number, ordinal) pairs; ``pairs`` numbers the keys in first-seen order."""
        keys = sorted(pairs, key=pairs.__getitem__)
        order = sorted(range(len(keys)), key=keys.__getitem__)
        rank = np.empty(len(keys), dtype=np.int64)
        rank[order] = np.arange(len(keys), dtype=np.int64)
        kid = rank[np.frombuffer(key_of, dtype=np.int64)] if len(key_of) else np.zeros(0, np.int64)
        by_key = np.argsort(kid, kind="stable")  # ordinals were appended ascending
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(np.bincount(kid, minlength=len(keys)), out=offsets[1:])
        ords = np.frombuffer(ordinal, dtype=np.int64)[by_key] if len(ordinal) else kid
        return cls([keys[i] for i in order], offsets, np.ascontiguousarray(ords, dtype=np.int64))


@dataclass(frozen=True)
class ThreadMaps:
    threads: KeyMap
    authors: KeyMap

    @classmethod
    def from_parts(cls, parts: list[IndexArrays]) -> ThreadMaps:
        groups: dict[str, tuple[dict[str, int], array[int], array[int]]] = {
            name: ({}, array("q"), array("q")) for name in ("thread_id", "author")
        }
        for ordinal, fields in enumerate(_fields(parts)):
            for name, (numbers, key_of, ords) in groups.items():
                key = fields.get(name)
                if isinstance(key, str) and key:
                    key_of.append(numbers.setdefault(key, len(numbers)))
                    ords.append(ordinal)
        return cls(KeyMap.group(*groups["thread_id"]), KeyMap.group(*groups["author"]))

    def save(self, index_dir: Path, content_sha256: str) -> None:
        target = index_dir / FOLDER
        tmp = Path(tempfile.mkdtemp(prefix=f".{FOLDER}.", dir=index_dir))
        try:
            for name, m in (("thread", self.threads), ("author", self.authors)):
                np.save(tmp / f"{name}_offsets.npy", m.offsets)
                np.save(tmp / f"{name}_ords.npy", m.ords)
                (tmp / f"{name}_keys.json").write_text(json.dumps(m.keys, ensure_ascii=False))
            meta = {"format": FORMAT, "version": FORMAT_VERSION, "index_sha256": content_sha256}
            (tmp / "manifest.json").write_text(json.dumps(meta) + "\n")
            shutil.rmtree(target, ignore_errors=True)
            os.replace(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    @classmethod
    def load(cls, index_dir: Path, content_sha256: str) -> ThreadMaps | None:
        """The saved maps, or ``None`` when absent or made for other documents."""
        folder = index_dir / FOLDER
        try:
            meta = safejson.loads((folder / "manifest.json").read_bytes())
        except (FileNotFoundError, ValueError):
            return None
        expected = {"format": FORMAT, "version": FORMAT_VERSION, "index_sha256": content_sha256}
        if meta != expected:
            return None
        maps = []
        for name in ("thread", "author"):
            keys: list[str] = safejson.loads((folder / f"{name}_keys.json").read_bytes())
            offsets = np.load(folder / f"{name}_offsets.npy", allow_pickle=False)
            ords = np.load(folder / f"{name}_ords.npy", mmap_mode="r", allow_pickle=False)
            maps.append(KeyMap(keys, offsets, ords))
        return cls(*maps)


def _fields(parts: list[IndexArrays]) -> Iterator[dict[str, Any]]:
    """Each stored document as a JSON object, in ordinal order (cheaper than validating it)."""
    for p in parts:
        store = bytes(p.store)
        offsets = np.asarray(p.doc_offsets).tolist()
        for lo, hi in itertools.pairwise(offsets):
            yield safejson.loads(store[lo:hi])


class ThreadLookups:
    """The ``ThreadedBackend`` methods, mixed into ``EmbeddedIndex``."""

    _parts: list[IndexArrays]
    path: Path | None
    _thread_maps: ThreadMaps | None = None

    # Provided by the index this is mixed into.
    def count_before(self, as_of: datetime) -> int:
        raise NotImplementedError

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        raise NotImplementedError

    def read_ordinal(self, ordinal: int) -> Document:
        raise NotImplementedError

    @property
    def manifest(self) -> dict[str, object]:
        raise NotImplementedError

    def thread_maps(self) -> ThreadMaps:
        if self._thread_maps is None:
            sha = str(self.manifest.get("content_sha256", ""))
            loaded = ThreadMaps.load(self.path, sha) if self.path is not None else None
            self._thread_maps = loaded or ThreadMaps.from_parts(self._parts)
        return self._thread_maps

    def save_thread_maps(self) -> None:
        if self.path is None:
            raise ValueError("an in-memory index has no directory to save thread maps in")
        self.thread_maps().save(self.path, str(self.manifest.get("content_sha256", "")))

    def has_threads(self) -> bool:
        """Whether any document belongs to a thread (the thread tools are worth offering)."""
        return bool(self.thread_maps().threads.keys)

    def post(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.read(doc_id, as_of=as_of)

    def thread(self, thread_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]:
        """The first ``limit`` documents of a thread visible at the cutoff, in time order.

        A thread with no visible document raises ``DocumentNotVisible`` with the message of an
        unknown id, so a thread that starts later cannot be told from one that does not exist.
        """
        docs = self._visible(self.thread_maps().threads.ordinals(thread_id), as_of, limit, True)
        if not docs:
            from pastcast.corpus._protocol import not_visible_message

            raise DocumentNotVisible(not_visible_message(thread_id, as_of))
        return docs

    def author_posts(self, author: str, *, as_of: datetime, limit: int = 20) -> list[Document]:
        """The author's last ``limit`` documents before the cutoff, in time order (empty for
        an unknown author as for one who posts only later)."""
        return self._visible(self.thread_maps().authors.ordinals(author), as_of, limit, False)

    def _visible(self, ords: I64, as_of: datetime, limit: int, first: bool) -> list[Document]:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        n = int(np.searchsorted(ords, self.count_before(as_of), side="left"))
        chosen = ords[:n][:limit] if first else ords[:n][-limit:]
        cutoff = as_utc(as_of)
        out = []
        for ordinal in chosen.tolist():
            doc = self.read_ordinal(ordinal)
            if not is_visible(doc.timestamp, cutoff):  # rechecked on the stored document itself
                raise RuntimeError(f"index corrupt: {doc.id!r} returned at cutoff {cutoff}")
            out.append(doc)
        return out
