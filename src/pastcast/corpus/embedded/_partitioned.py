"""The month-partitioned on-disk layout of a BM25 index, built streaming and resumable.

Layout of an index directory::

    manifest.json          format, version, the partitions in time order (written last)
    id_rank.npy            rank of each global ordinal's id in lexicographic id order
    parts/YYYY-MM/         one UTC month: a complete single-partition index (see ``_arrays``)

Global ordinals number documents by (timestamp, id) across partitions, so the documents before a
cutoff are still a prefix of the ordinals; a month's partition holds a contiguous range of them.

Building streams the input once into per-month spool files (so the input may come in any order
and memory stays bounded by one month), then indexes one month at a time. Each partition is
written atomically (temporary directory + rename) inside a work directory next to the target.
A build that stops part-way leaves its complete partitions there; building the same documents
again reuses every partition whose content hash matches and indexes only the rest, so a resumed
build neither loses nor duplicates documents. The manifest is written last and the work
directory is then renamed onto the target.
"""

from __future__ import annotations

import errno
import hashlib
import json
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from rich.console import Console
from rich.progress import Progress

from pastcast import safejson
from pastcast.atomic import replace_directory
from pastcast.corpus._identity import MonthDigests, combine_month_digests, document_line
from pastcast.corpus.embedded._arrays import FORMAT as PART_FORMAT
from pastcast.corpus.embedded._arrays import (
    IndexArrays,
    build_arrays,
    build_from_lines,
    from_micros,
    load_arrays,
    save_arrays,
)
from pastcast.cutoff import as_utc
from pastcast.owned import check_replaceable, mark
from pastcast.records import Document

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Loaded",
    "build_partitioned",
    "global_id_rank",
    "load_index",
    "month_of",
    "months_digest",
    "partition_in_memory",
    "summary",
]

FORMAT = "pastcast-bm25-monthly"
FORMAT_VERSION = 2
_MAX_OPEN_SPOOLS = 64


def month_of(doc: Document) -> str:
    """The UTC month of a document, ``YYYY-MM`` (its partition name)."""
    ts = as_utc(doc.timestamp)
    return f"{ts.year:04d}-{ts.month:02d}"  # strftime took 7% of a build


@dataclass(frozen=True)
class Loaded:
    """An opened index: its partitions in time order, the global id ranks and the manifest."""

    parts: list[IndexArrays]
    id_rank: np.ndarray[Any, np.dtype[np.int64]]
    manifest: dict[str, Any]


def global_id_rank(parts: list[IndexArrays]) -> np.ndarray[Any, np.dtype[np.int64]]:
    ids = np.array([i for p in parts for i in p.ids], dtype=object)
    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.argsort(ids, kind="stable")] = np.arange(len(ids), dtype=np.int64)
    return rank


def summary(parts: list[IndexArrays]) -> dict[str, Any]:
    """The manifest of a partitioned index (deterministic for a given set of documents).

    Its ``content_sha256`` is the corpus digest of ``pastcast.corpus._identity``: each month
    partition's digest is that of its document lines in ordinal order.
    """
    entries = []
    for name, p in zip(_names(parts), parts, strict=True):
        entries.append(
            {
                "name": name,
                "doc_count": len(p.ids),
                "total_len": int(p.len_prefix[-1]),
                "first_timestamp": p.manifest["first_timestamp"],
                "last_timestamp": p.manifest["last_timestamp"],
                "content_sha256": p.manifest["content_sha256"],
            }
        )
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "doc_count": sum(len(p.ids) for p in parts),
        "postings": sum(int(p.manifest["postings"]) for p in parts),
        "partitions": entries,
        "content_sha256": combine_month_digests(str(p.manifest["content_sha256"]) for p in parts),
        "first_timestamp": parts[0].manifest["first_timestamp"] if parts else None,
        "last_timestamp": parts[-1].manifest["last_timestamp"] if parts else None,
    }


def months_digest(parts: list[IndexArrays]) -> str:
    """The corpus digest computed from the stored document lines, month by month.

    For this layout it equals the manifest's ``content_sha256``; an index of the earlier
    single-partition layout hashed all its documents at once, so its digest is derived here.
    """
    digests = MonthDigests()
    for p in parts:
        store = bytes(p.store)
        offsets = np.asarray(p.doc_offsets).tolist()
        for i, micros in enumerate(np.asarray(p.timestamps).tolist()):
            digests.add(from_micros(micros).strftime("%Y-%m"), store[offsets[i] : offsets[i + 1]])
    return digests.hexdigest()


def _names(parts: list[IndexArrays]) -> list[str]:
    return [str(p.manifest.get("partition", f"part-{i}")) for i, p in enumerate(parts)]


def partition_in_memory(documents: Iterable[Document]) -> list[IndexArrays]:
    """Month partitions held in memory (tests and small corpora)."""
    by_month: dict[str, list[Document]] = {}
    seen: set[str] = set()
    for doc in documents:
        if doc.id in seen:
            raise ValueError(f"duplicate document id {doc.id!r}")
        seen.add(doc.id)
        by_month.setdefault(month_of(doc), []).append(doc)
    parts = []
    for month in sorted(by_month):
        arrays = build_arrays(by_month[month])
        arrays.manifest["partition"] = month
        parts.append(arrays)
    return parts


class _Spool:
    """Per-month files of JSON lines, with a bounded number of open handles."""

    def __init__(self, folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        self.folder = folder
        self.counts: dict[str, int] = {}
        self._open: dict[str, IO[bytes]] = {}

    def add(self, month: str, line: bytes) -> None:
        handle = self._open.get(month)
        if handle is None:
            if len(self._open) >= _MAX_OPEN_SPOOLS:
                self.close()
            handle = self._open[month] = (self.folder / f"{month}.jsonl").open("ab")
        handle.write(line)
        self.counts[month] = self.counts.get(month, 0) + 1

    def close(self) -> None:
        for handle in self._open.values():
            handle.close()
        self._open.clear()

    def lines(self, month: str) -> list[bytes]:
        return (self.folder / f"{month}.jsonl").read_bytes().splitlines(keepends=True)


def _spool_hash(lines: list[bytes]) -> str:
    digest = hashlib.sha256()
    for line in sorted(lines):
        digest.update(line)
    return digest.hexdigest()


def _complete_partition(folder: Path, spool_sha: str) -> IndexArrays | None:
    """The partition in ``folder`` if a previous build completed it from the same documents."""
    try:
        arrays = load_arrays(folder)
    except (FileNotFoundError, ValueError):
        return None
    return arrays if arrays.manifest.get("spool_sha256") == spool_sha else None


_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def _work_dir(out_dir: Path) -> Path:
    return out_dir.with_name(f".{out_dir.name}.building")


def build_partitioned(
    documents: Iterable[Document],
    out_dir: Path,
    *,
    overwrite: bool = False,
    progress: bool = False,
    kind: str = "index",
) -> Loaded:
    """Index ``documents`` into month partitions under ``out_dir`` (see the module docstring)
    and return the opened index. An existing ``out_dir`` is replaced only with ``overwrite``,
    and only if pastcast made it as a ``kind`` (``pastcast.owned``) or it is an empty folder.

    Documents given as a sequence are in memory already: they are grouped by month in memory
    instead of through spool files (no JSON written, read back and validated again), and the
    partitions built stay in memory; any other iterable is streamed through the spool.

    A build that stops part-way keeps its complete partitions in the work directory for the next
    one, except on a full disk: then the work directory, which holds the space, is removed.
    """
    try:
        return _build(documents, Path(out_dir), overwrite, progress, kind)
    except OSError as exc:
        if exc.errno in _DISK_FULL:
            shutil.rmtree(_work_dir(Path(out_dir)), ignore_errors=True)
        raise


def _build(
    documents: Iterable[Document], out_dir: Path, overwrite: bool, progress: bool, kind: str
) -> Loaded:
    if out_dir.exists() or out_dir.is_symlink():
        check_replaceable(out_dir, kind)
        if not overwrite and any(out_dir.iterdir()):
            raise FileExistsError(f"{out_dir}: already exists (pass overwrite to replace it)")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = _work_dir(out_dir)
    (work / "parts").mkdir(parents=True, exist_ok=True)
    months_of: _Months
    if isinstance(documents, Sequence):
        months_of, in_memory = _MemoryMonths(documents), True
    else:
        months_of, in_memory = _SpoolMonths(work / "spool"), False
    with Progress(disable=not progress, transient=True, console=Console(stderr=True)) as bar:
        if not in_memory:
            task = bar.add_task("reading documents", total=None)
            months_of.fill(documents, lambda count: bar.update(task, completed=count))
        months = months_of.months()
        task = bar.add_task("indexing months", total=len(months))
        parts: list[IndexArrays] = []
        for month in months:
            lines = months_of.lines(month)
            sha = _spool_hash(lines)
            folder = work / "parts" / month
            arrays = _complete_partition(folder, sha)
            if arrays is None:
                built = build_from_lines(months_of.pairs(month, lines))
                built.manifest.update(partition=month, spool_sha256=sha)
                save_arrays(built, folder, overwrite=True)
                # a streamed build keeps memory bounded by one month: its partitions are mapped
                arrays = built if in_memory else load_arrays(folder)
            parts.append(arrays)
            bar.update(task, advance=1)
    wanted = set(months)
    for stale in (work / "parts").iterdir():
        if stale.name not in wanted:
            shutil.rmtree(stale)
    shutil.rmtree(work / "spool", ignore_errors=True)
    id_rank = global_id_rank(parts)
    manifest = summary(parts)
    np.save(work / "id_rank.npy", id_rank)
    (work / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    mark(work, kind)
    replace_directory(work, out_dir)
    return Loaded(parts, id_rank, manifest)


class _Months:
    """Where a build finds each month's documents and their lines."""

    def fill(self, documents: Iterable[Document], tick: Callable[[int], object]) -> None:
        raise NotImplementedError

    def months(self) -> list[str]:
        raise NotImplementedError

    def lines(self, month: str) -> list[bytes]:
        raise NotImplementedError

    def pairs(self, month: str, lines: list[bytes]) -> Iterable[tuple[Document, bytes]]:
        raise NotImplementedError


class _SpoolMonths(_Months):
    """Streamed input: one spool file of JSON lines per month."""

    def __init__(self, folder: Path) -> None:
        self.spool = _Spool(folder)

    def fill(self, documents: Iterable[Document], tick: Callable[[int], object]) -> None:
        seen: set[str] = set()
        try:
            for doc in documents:
                if doc.id in seen:
                    raise ValueError(f"duplicate document id {doc.id!r}")
                seen.add(doc.id)
                self.spool.add(month_of(doc), document_line(doc))
                if len(seen) % 1000 == 0:
                    tick(len(seen))
        finally:
            self.spool.close()

    def months(self) -> list[str]:
        return sorted(self.spool.counts)

    def lines(self, month: str) -> list[bytes]:
        return self.spool.lines(month)

    def pairs(self, month: str, lines: list[bytes]) -> Iterable[tuple[Document, bytes]]:
        # the spooled line is the document's line (``document_line``): not made again
        return ((Document.model_validate_json(line), line) for line in lines)


class _MemoryMonths(_Months):
    """Documents held in memory, grouped by month with their lines."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.by_month: dict[str, list[tuple[Document, bytes]]] = {}
        seen: set[str] = set()
        for doc in documents:
            if doc.id in seen:
                raise ValueError(f"duplicate document id {doc.id!r}")
            seen.add(doc.id)
            self.by_month.setdefault(month_of(doc), []).append((doc, document_line(doc)))

    def months(self) -> list[str]:
        return sorted(self.by_month)

    def lines(self, month: str) -> list[bytes]:
        return [line for _, line in self.by_month[month]]

    def pairs(self, month: str, lines: list[bytes]) -> Iterable[tuple[Document, bytes]]:
        return self.by_month[month]


def load_index(index_dir: Path) -> Loaded:
    """Open a partitioned index, or a single-partition index of the earlier layout."""
    index_dir = Path(index_dir)
    manifest_path = index_dir / "manifest.json"
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{index_dir}: not an index (no manifest.json)")
    manifest = safejson.loads(manifest_path.read_bytes())
    if manifest.get("format") == PART_FORMAT:  # the earlier, unpartitioned layout
        arrays = load_arrays(index_dir)
        return Loaded([arrays], np.asarray(arrays.id_rank, dtype=np.int64), arrays.manifest)
    if manifest.get("format") != FORMAT or manifest.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{manifest_path}: unsupported index format {manifest.get('format')!r} "
            f"version {manifest.get('version')!r} (expected {FORMAT!r} {FORMAT_VERSION})"
        )
    parts = [load_arrays(index_dir / "parts" / p["name"]) for p in manifest["partitions"]]
    for p, entry in zip(parts, manifest["partitions"], strict=True):
        if p.manifest["content_sha256"] != entry["content_sha256"]:
            raise ValueError(f"{index_dir}: partition {entry['name']} does not match the manifest")
    id_rank = np.asarray(np.load(index_dir / "id_rank.npy", mmap_mode="r", allow_pickle=False))
    return Loaded(parts, id_rank, manifest)
