"""Per-key ordinal maps of the embedded index: thread, author, source and parent. Each map is
a sorted key list and, per key, its documents' global ordinals ascending, so the documents of a
key visible at a cutoff are a prefix (one bisection against ``count_before``). A build writes
each month's maps (``save_partition_maps``) and streams a k-way merge of them by key into
``threads/`` (``merge_partition_maps``): memory bounded by the partitions' number, not the
documents'. An index held in memory computes them on first use (docs/corpus.md, "Thread and
author look-ups").
"""

from __future__ import annotations

import heapq
import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from pastcast import safejson
from pastcast.atomic import atomic_directory
from pastcast.npyfiles import NpyReader, NpyWriter, load_npy

if TYPE_CHECKING:
    from pastcast.corpus.embedded._arrays import IndexArrays

I64 = npt.NDArray[np.int64]
FOLDER = "threads"
FORMAT = "pastcast-thread-maps"
FORMAT_VERSION = 2  # 2: source and parent maps added (a version 1 folder is recomputed)
# map name -> the document field it groups by
FIELDS = {"thread": "thread_id", "author": "author", "source": "source", "parent": "parent_id"}


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
    def of(cls, values: Sequence[str | None]) -> KeyMap:
        """The ordinals (positions in ``values``) grouped by value; None and "" belong to none."""
        present = [i for i, v in enumerate(values) if v]
        named = [v for v in values if v]
        keys = sorted(set(named))
        number = {k: i for i, k in enumerate(keys)}
        kid = np.fromiter(map(number.__getitem__, named), dtype=np.int64, count=len(named))
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(np.bincount(kid, minlength=len(keys)), out=offsets[1:])
        ords = np.asarray(present, dtype=np.int64)[np.argsort(kid, kind="stable")]
        return cls(keys, offsets, ords)


@dataclass(frozen=True)
class DocMaps:
    threads: KeyMap
    authors: KeyMap
    sources: KeyMap
    parents: KeyMap
    """parent id -> the ordinals of its direct replies."""

    @classmethod
    def from_parts(cls, parts: list[IndexArrays]) -> DocMaps:
        columns: dict[str, list[str | None]] = {f: [] for f in FIELDS.values()}
        for fields in _fields(parts):
            for name, column in columns.items():
                value = fields.get(name)
                column.append(value if isinstance(value, str) else None)
        return cls.from_columns(columns)

    @classmethod
    def from_columns(cls, columns: Mapping[str, Sequence[str | None]]) -> DocMaps:
        """The maps of documents in ordinal order, given as columns (``columns[field][i]``: the
        field of ordinal ``i``)."""
        return cls(*(KeyMap.of(columns[f]) for f in FIELDS.values()))

    def _maps(self) -> tuple[KeyMap, ...]:
        return (self.threads, self.authors, self.sources, self.parents)

    @classmethod
    def load(cls, index_dir: Path, content_sha256: str) -> DocMaps | None:
        """The saved maps, or ``None`` when absent, of another version or for other documents."""
        folder = index_dir / FOLDER
        try:
            meta = safejson.loads((folder / "manifest.json").read_bytes())
        except (FileNotFoundError, ValueError):
            return None
        expected = {"format": FORMAT, "version": FORMAT_VERSION, "index_sha256": content_sha256}
        if meta != expected:
            return None
        maps = []
        for name in FIELDS:
            keys: list[str] = safejson.loads((folder / f"{name}_keys.json").read_bytes())
            offsets = load_npy(folder / f"{name}_offsets.npy", mmap=False)
            ords = load_npy(folder / f"{name}_ords.npy")
            maps.append(KeyMap(keys, offsets, ords))
        return cls(*maps)


def _fields(parts: list[IndexArrays]) -> Iterator[dict[str, Any]]:
    """Each stored document as a JSON object, in ordinal order (cheaper than validating it)."""
    for p in parts:
        yield from map(safejson.loads, p.lines())


PART_FOLDER = "maps"
_KEY = json.JSONEncoder(ensure_ascii=False).encode  # ``json.dumps`` makes an encoder a call


def save_partition_maps(folder: Path, columns: Mapping[str, Sequence[str | None]]) -> None:
    """The maps of one partition's documents (``DocMaps.from_columns``) into ``folder/maps``:
    per map, its sorted keys one JSON string a line, their offsets and the local ordinals."""
    maps = DocMaps.from_columns(columns)
    target = folder / PART_FOLDER
    target.mkdir()
    for name, m in zip(FIELDS, maps._maps(), strict=True):
        np.save(target / f"{name}_offsets.npy", m.offsets)
        np.save(target / f"{name}_ords.npy", m.ords)
        with (target / f"{name}_keys.jsonl").open("w", encoding="utf-8") as fh:
            fh.writelines(_KEY(k) + "\n" for k in m.keys)


# -- merging: files read and written front to back a chunk at a time, never mapped (the pages
# read through a mapping stay counted in the process's memory while it is mapped), so that a
# build's merge holds a few chunks per partition whatever the corpus size; a reader reopens its
# file for each chunk, so thousands of them need no open handle each (``.npy`` files:
# ``pastcast.npyfiles.NpyReader`` and ``NpyWriter``)


class LineReader:
    """The lines of a file, taken in order ``take(count)`` at a time."""

    def __init__(self, path: Path) -> None:
        self.path, self._offset = path, 0

    def take(self, count: int) -> list[bytes]:
        lines: list[bytes] = []
        with self.path.open("rb") as fh:
            fh.seek(self._offset)
            while len(lines) < count and (line := fh.readline()):
                lines.append(line)
            self._offset = fh.tell()
        return lines


_MERGE_ROWS = 1 << 20  # keys buffered over all partitions at once during a merge


def _entries(folder: Path, name: str, part: int, base: int, step: int) -> Iterator[tuple[Any, ...]]:
    """A partition's keys of map ``name`` in its sorted order, each with its global ordinals,
    read ``step`` keys at a time."""
    where = folder / PART_FOLDER
    keys = LineReader(where / f"{name}_keys.jsonl")
    ends, ords = (NpyReader(where / f"{name}_{n}.npy") for n in ("offsets", "ords"))
    lo = int(ends.take(1)[0])
    while lines := keys.take(step):
        bounds = ends.take(len(lines))
        values = ords.take(int(bounds[-1]) - lo) + base
        starts = [0, *(bounds[:-1] - lo).tolist()]
        for line, a, b in zip(lines, starts, (bounds - lo).tolist(), strict=True):
            yield safejson.loads(line), part, values[a:b]
        lo = int(bounds[-1])


def merge_partition_maps(
    folders: Sequence[Path], bases: Sequence[int], index_dir: Path, content_sha256: str
) -> None:
    """The index's maps (``DocMaps.save``'s layout) merged from its partitions' maps, in time
    order with their first global ordinals ``bases``: a k-way merge of the sorted key files, each
    key's ordinals the partitions' in time order (so ascending), written as they come. Memory is
    bounded by a few chunks per partition, never the keys' or the documents' number."""
    step = max(64, _MERGE_ROWS // max(1, len(folders)))
    with atomic_directory(index_dir / FOLDER) as tmp:
        for name in FIELDS:
            runs = (_entries(f, name, p, bases[p], step) for p, f in enumerate(folders))
            merged = heapq.merge(*runs)
            with (
                (tmp / f"{name}_keys.json").open("w", encoding="utf-8") as keys,
                NpyWriter(tmp / f"{name}_offsets.npy") as offsets,
                NpyWriter(tmp / f"{name}_ords.npy") as ords,
            ):
                keys.write("[")
                ends, pending, total = [0], [], 0
                groups = itertools.groupby(merged, key=lambda item: item[0])
                for count, (key, group) in enumerate(groups):
                    keys.write(("," if count else "") + json.dumps(key, ensure_ascii=False))
                    for *_, values in group:
                        pending.append(values)
                        total += len(values)
                    ends.append(total)
                    if len(ends) >= step:
                        offsets.write(ends)
                        ords.write(np.concatenate(pending))
                        ends, pending = [], []
                keys.write("]")
                offsets.write(ends)
                if pending:
                    ords.write(np.concatenate(pending))
        meta = {"format": FORMAT, "version": FORMAT_VERSION, "index_sha256": content_sha256}
        (tmp / "manifest.json").write_text(json.dumps(meta) + "\n")
