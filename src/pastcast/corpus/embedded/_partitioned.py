"""The month-partitioned on-disk layout of a BM25 index, built streaming and resumable, and
appended to: ``manifest.json`` (the partitions in time order, written last), ``id_rank.npy`` and
``id_order.npy`` (global ordinals by id), ``parts/YYYY-MM/`` (one month each, ``_arrays``),
``threads/`` (``_maps``) and ``build_report.json``. Global ordinals number documents by
(timestamp, id) across partitions, so the documents before a cutoff are a prefix of them. How a
build spools, indexes months in parallel, merges and resumes, and how an append swaps the
index: docs/corpus.md ("Month partitions", "Build", "Appends", "Atomicity").
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import heapq
import itertools
import json
import multiprocessing
import os
import resource
import shutil
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

import numpy as np

from pastcast import safejson
from pastcast.atomic import replace_directory
from pastcast.corpus._build_report import CorpusBuildReport
from pastcast.corpus._identity import combine_month_digests, document_line
from pastcast.corpus.embedded._arrays import (
    DIRECTORY_FILES,
    IndexArrays,
    Row,
    TermDirectory,
    build_arrays,
    build_from_rows,
    load_arrays,
    map_columns,
    ordered_rows,
    read_manifest,
    rows_of_documents,
    rows_of_lines,
    save_arrays,
)
from pastcast.corpus.embedded._arrays import FORMAT as PART_FORMAT
from pastcast.corpus.embedded._arrays import FORMAT_VERSION as PART_VERSION
from pastcast.corpus.embedded._maps import (
    LineReader,
    merge_partition_maps,
    save_partition_maps,
)
from pastcast.corpus.embedded._ranges import month_of_partition, split_sorted, split_spool
from pastcast.corpus.embedded._read_reuse import ReadStamp, SealedRead, reuse, seal
from pastcast.cutoff import as_utc
from pastcast.npyfiles import NpyReader, NpyWriter, load_npy
from pastcast.owned import MARKER, check_replaceable, mark
from pastcast.records import Document

if TYPE_CHECKING:  # rich: imported by a build, not by opening an index to search it
    from pastcast.progress import ProgressReporter

FORMAT = "pastcast-bm25-monthly"
FORMAT_VERSION = 3  # 3: the term directory; 2: per-month term tables only
_MAX_OPEN_SPOOLS = 128
_ID_CHUNK = 1 << 16  # ids merged and written in chunks: numpy per chunk, not per id
_MERGE_ROWS = 1 << 20  # ids read ahead over all partitions at once during the merge
_RANK_FILES = ("id_rank.npy", "id_order.npy")  # global: ranks by ordinal, ordinals by id
I64 = np.ndarray[Any, np.dtype[np.int64]]


def month_of(doc: Document) -> str:
    """The UTC month of a document, ``YYYY-MM`` (its partition name)."""
    ts = as_utc(doc.timestamp)
    return f"{ts.year:04d}-{ts.month:02d}"  # strftime took 7% of a build


def month_digests(
    folders: Sequence[Path], known: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The digest of each month cut into ranges (folders ``YYYY-MM.NNNN``, in time order): the
    hash of its ranges' stored lines one after the other, read in chunks (``known``: digests
    an earlier manifest holds, not hashed again)."""
    out = dict(known or {})
    hashing: dict[str, Any] = {}
    for folder in folders:
        month = month_of_partition(folder.name)
        if month == folder.name or month in out:
            continue
        digest = hashing.setdefault(month, hashlib.sha256())
        with (folder / "docs.jsonl").open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    return out | {m: d.hexdigest() for m, d in hashing.items()}


def global_id_rank(parts: list[IndexArrays]) -> np.ndarray[Any, np.dtype[np.int64]]:
    ids = np.array([i for p in parts for i in p.ids], dtype=object)
    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.argsort(ids, kind="stable")] = np.arange(len(ids), dtype=np.int64)
    return rank


def summary(parts: list[IndexArrays], months: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The manifest of a partitioned index (deterministic for a given set of documents); its
    ``content_sha256`` is the corpus digest of ``pastcast.corpus._identity``, from the digests of
    the months cut into ranges (``months``: ``month_digests``) and the other partitions'."""
    entries, digests = [], {}
    for name, p in zip(_names(parts), parts, strict=True):
        entry = {
            "name": name,
            "doc_count": len(p.ids),
            "total_len": int(p.len_prefix[-1]),
            "first_timestamp": p.manifest["first_timestamp"],
            "last_timestamp": p.manifest["last_timestamp"],
            "content_sha256": p.manifest["content_sha256"],
        }
        month = month_of_partition(name)
        if month != name:  # one range of a month
            entry["month_sha256"] = (months or {})[month]
        digests[month] = entry.get("month_sha256", entry["content_sha256"])
        entries.append(entry)
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "doc_count": sum(len(p.ids) for p in parts),
        "postings": sum(int(p.manifest["postings"]) for p in parts),
        "partitions": entries,
        "content_sha256": combine_month_digests(map(str, digests.values())),
        "first_timestamp": parts[0].manifest["first_timestamp"] if parts else None,
        "last_timestamp": parts[-1].manifest["last_timestamp"] if parts else None,
    }


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

    def __init__(self, folder: Path, sealed: SealedRead | None = None) -> None:
        if sealed is None:  # a spool not sealed (``_read_reuse``) is read again
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
        self.folder = folder
        self.counts: dict[str, int] = dict(sealed.counts) if sealed is not None else {}
        self._open: dict[str, IO[bytes]] = {}

    def add(self, month: str, line: bytes) -> None:
        handle = self._open.get(month)
        if handle is None:
            if len(self._open) >= _MAX_OPEN_SPOOLS:
                self.close()
            handle = self._open[month] = self.path(month).open("ab")
        handle.write(line)
        self.counts[month] = self.counts.get(month, 0) + 1

    def close(self) -> None:
        for handle in self._open.values():
            handle.close()
        self._open.clear()

    def path(self, month: str) -> Path:
        return self.folder / f"{month}.jsonl"


def _complete_partition(folder: Path, spool_sha: str) -> bool:
    """Whether a previous build completed the partition in ``folder`` from the same documents."""
    try:
        manifest = safejson.loads((folder / "manifest.json").read_bytes())
    except (FileNotFoundError, ValueError):
        return False
    made = (manifest.get("format"), manifest.get("version"), manifest.get("spool_sha256"))
    return made == (PART_FORMAT, PART_VERSION, spool_sha)


_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def _work_dir(out_dir: Path) -> Path:
    return out_dir.with_name(f".{out_dir.name}.building")


MonthRunner = Callable[[Callable[[Any], bool], Sequence[Any]], Iterable[tuple[Any, bool]]]
"""Runs ``index(task)`` for every month task, anywhere that sees the work directory; yields
each task with its result as it finishes (``pastcast.corpus.sharded.dask_months``)."""


@dataclass(frozen=True)
class BuildOptions:
    """How a build or an append runs (``workers`` processes: default the CPU count, 1 in this
    process; or ``runner``), which ``kind`` of folder it makes, and what the stages before it
    left out and their report lines, given once the documents are read (for the stored build
    report). With ``read``, a complete read phase of a build cut short is reused."""

    progress: bool = False
    kind: str = "index"
    workers: int | None = None
    removed: Callable[[], Mapping[str, int]] = dict
    notes: Callable[[], Sequence[str]] = tuple
    read: ReadStamp | None = None
    runner: MonthRunner | None = None

    def worker_count(self) -> int:
        return max(1, self.workers if self.workers is not None else os.cpu_count() or 1)


def build_partitioned(
    documents: Iterable[Document], out_dir: Path, options: BuildOptions, *, overwrite: bool = False
) -> None:
    """Index ``documents`` into month partitions under ``out_dir`` (a sequence, in memory
    already, skips the spool files). A build cut short keeps its complete partitions for the
    next one, but on a full disk (the work directory holds the space) and when its documents are
    refused (``ValueError``: it leaves nothing it made)."""
    out_dir = Path(out_dir)
    work = _work_dir(out_dir)
    resumed = work.exists()
    made = _missing(out_dir.parent)
    try:
        _build(documents, out_dir, overwrite, options)
    except OSError as exc:
        if exc.errno in _DISK_FULL:
            shutil.rmtree(work, ignore_errors=True)
        raise
    except ValueError:
        if not resumed:
            shutil.rmtree(work, ignore_errors=True)
        for folder in made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _missing(folder: Path) -> list[Path]:
    """``folder`` and the folders above it that are not there, the deepest first."""
    out = []
    while not (folder.exists() or folder.is_symlink()) and folder != folder.parent:
        out.append(folder)
        folder = folder.parent
    return out


_Months = dict[str, list[Row]]  # documents in memory, as rows in ordinal order


@dataclass(frozen=True)
class _MonthTask:
    month: str
    spool: Path | None  # the month's spool file; None: the lines are given in this process
    folder: Path


def _index_month(task: _MonthTask, rows: list[Row] | None = None) -> bool:
    """Index one month into ``task.folder`` unless a previous build completed it from the same
    documents; whether it was reused. Runs in a worker process (from its spool file) or here."""
    if rows is not None:
        lines = [r[8] for r in rows]
    else:
        assert task.spool is not None
        lines = task.spool.read_bytes().splitlines(keepends=True)
    sha = hashlib.sha256(b"".join(sorted(lines))).hexdigest()  # in any order: the same hash
    if _complete_partition(task.folder, sha):
        return True
    # the spooled line is the document's line (``document_line``): read, not validated again
    ordered = rows if rows is not None else ordered_rows(rows_of_lines(lines))
    del lines
    built = build_from_rows(ordered)
    built.manifest.update(partition=task.month, spool_sha256=sha)
    columns = map_columns(ordered)
    del ordered
    save_arrays(built, task.folder, lambda tmp: save_partition_maps(tmp, columns))
    return False


def _build(
    documents: Iterable[Document], out_dir: Path, overwrite: bool, options: BuildOptions
) -> None:
    clock = _PhaseClock()
    if out_dir.exists() or out_dir.is_symlink():
        check_replaceable(out_dir, options.kind)
        if not overwrite and any(out_dir.iterdir()):
            raise FileExistsError(f"{out_dir}: already exists (pass overwrite to replace it)")
    workers = options.worker_count()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = _work_dir(out_dir)
    (work / "parts").mkdir(parents=True, exist_ok=True)
    for leftover in (*_RANK_FILES, "manifest.json", *DIRECTORY_FILES):
        (work / leftover).unlink(missing_ok=True)
    shutil.rmtree(work / "threads", ignore_errors=True)
    memory: _Months | None = None
    if isinstance(documents, Sequence):  # in memory already: grouped by partition here
        by_month: dict[str, list[tuple[Document, bytes]]] = {}
        for doc in documents:
            by_month.setdefault(month_of(doc), []).append((doc, document_line(doc)))
        memory = {}
        for month, pairs in by_month.items():
            memory.update(split_sorted(month, ordered_rows(rows_of_documents(pairs))))
    sealed = None
    if memory is None and options.read is not None:
        sealed = reuse(work / "spool", options.read)
    spool = None if memory is not None else _Spool(work / "spool", sealed)
    from pastcast.progress import ProgressReporter

    with ProgressReporter("docs", enabled=options.progress) as bar:
        if sealed is not None:  # what the read stages reported, as they reported it then
            counts = dict(sealed.counts)
            removed, notes = sealed.removed, sealed.notes
            options = replace(options, removed=lambda: removed, notes=lambda: notes)
        elif spool is not None:
            task = bar.add_task("reading documents", total=None)
            _fill(spool, documents, lambda count: bar.update(task, completed=count))
            bar.remove_task(task)
            split_spool(spool.path, spool.counts)
            counts = dict(spool.counts)
            if options.read is not None:
                seal(spool.folder, options.read, counts, options.removed(), options.notes())
        else:
            assert memory is not None
            counts = {m: len(v) for m, v in memory.items()}
        clock.lap("read")
        months = sorted(counts)
        reused = _index_months(
            months, counts, work, spool, memory, workers, bar.update, bar.add_task, options.runner
        )
        clock.lap("index")
        manifest = _merge_globals(work, months, bar)
    spooled = spool is not None
    read_reused = sum(counts.values()) if sealed is not None else 0
    _finish(work, out_dir, manifest, clock, reused, workers, spooled, options, 0, read_reused)


def _merge_globals(
    work: Path, months: list[str], bar: ProgressReporter, known: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The global pieces from the partitions ``months`` in ``work/parts`` (any other folder
    there is removed): id ranks, the term directory, maps, the manifest (returned, written by
    ``_finish``; ``known``: ``month_digests``)."""
    wanted = set(months)
    for stale in (work / "parts").iterdir():
        if stale.name not in wanted:
            shutil.rmtree(stale)
    shutil.rmtree(work / "spool", ignore_errors=True)
    task = bar.add_task("merging ids and maps", total=2, unit="parts")
    folders = [work / "parts" / m for m in months]
    parts = [load_arrays(f) for f in folders]
    bases = list(itertools.accumulate((len(p.ids) for p in parts), initial=0))
    _merge_ids(folders, bases, work)
    bar.update(task, advance=1)
    manifest = summary(parts, month_digests(folders, known))
    TermDirectory.of([p.vocab for p in parts]).save(work)
    merge_partition_maps(folders, bases[:-1], work, str(manifest["content_sha256"]))
    bar.update(task, advance=1)
    return manifest


def _finish(
    work: Path,
    out_dir: Path,
    manifest: dict[str, Any],
    clock: _PhaseClock,
    reused: int,
    workers: int,
    spooled: bool,
    options: BuildOptions,
    kept: int = 0,
    read_reused: int = 0,
) -> None:
    """Manifest and report into ``work``, then ``work`` renamed onto ``out_dir``."""
    (work / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    clock.lap("merge")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    report = CorpusBuildReport(
        documents=int(manifest["doc_count"]),
        partitions=len(manifest["partitions"]),
        partitions_reused=reused,
        partitions_kept=kept,
        read_reused=read_reused,
        workers=workers,
        seconds=round(clock.total(), 3),
        cpu_seconds=round(clock.cpu(), 3),
        phase_seconds=clock.walls,
        phase_cpu_seconds=clock.cpus,
        peak_rss_bytes=own,
        worker_peak_rss_bytes=children if spooled and workers > 1 else 0,
        removed=dict(options.removed()),
        notes=tuple(options.notes()),
    )
    report.save(work)
    mark(work, options.kind)
    replace_directory(work, out_dir)


class _PhaseClock:
    """Wall and CPU seconds (this process and its finished workers) of each build phase."""

    def __init__(self) -> None:
        self.start = self.mark = time.perf_counter()
        self.cpu_mark = self.cpu()
        self.walls: dict[str, float] = {}
        self.cpus: dict[str, float] = {}

    @staticmethod
    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    def lap(self, phase: str) -> None:
        now, cpu = time.perf_counter(), self.cpu()
        self.walls[phase] = round(now - self.mark, 3)
        self.cpus[phase] = round(cpu - self.cpu_mark, 3)
        self.mark, self.cpu_mark = now, cpu

    def total(self) -> float:
        return time.perf_counter() - self.start


def _fill(spool: _Spool, documents: Iterable[Document], tick: Callable[[int], object]) -> None:
    """Spool ``documents`` by month (no id is remembered: repeated ids are found by the merge)."""
    count = 0
    try:
        for doc in documents:
            spool.add(month_of(doc), document_line(doc))
            count += 1
            if count % 4096 == 0:
                tick(count)
        tick(count)
    finally:
        spool.close()


def _index_months(
    months: list[str],
    counts: dict[str, int],
    work: Path,
    spool: _Spool | None,
    memory: _Months | None,
    workers: int,
    update: Callable[..., None],
    add_task: Callable[..., Any],
    runner: MonthRunner | None = None,
) -> int:
    """Index every month (in parallel with more than one worker and a spool, or by ``runner``);
    how many complete partitions of an earlier build were reused."""
    task = add_task("indexing months", total=sum(counts.values()))
    # absolute: a runner's workers may run elsewhere (shared storage, another working folder)
    work = work.absolute()
    tasks = [
        _MonthTask(m, None if spool is None else spool.path(m).absolute(), work / "parts" / m)
        for m in months
    ]
    reused = 0
    if spool is None or (workers == 1 and runner is None):
        for t in tasks:
            reused += _index_month(t, memory[t.month] if memory is not None else None)
            update(task, advance=counts[t.month])
        return reused
    # the largest months first, so that the last ones to finish are small
    tasks.sort(key=lambda t: -counts[t.month])
    for t, was_reused in (runner or _process_pool(workers))(_index_month, tasks):
        reused += was_reused
        update(task, advance=counts[t.month])
    return reused


def _process_pool(workers: int) -> MonthRunner:
    """The months indexed by ``workers`` local processes."""

    def run(index: Callable[[Any], bool], tasks: Sequence[Any]) -> Iterator[tuple[Any, bool]]:
        context = multiprocessing.get_context("spawn")  # no fork of a process running threads
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            pending: dict[Future[bool], Any] = {pool.submit(index, t): t for t in tasks}
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        yield pending.pop(future), future.result()
            except BaseException:
                for future in pending:
                    future.cancel()
                raise

    return run


def _id_run(runs: Path, part: int, base: int, step: int) -> Iterator[tuple[str, int, int]]:
    """A partition's (id, partition, global ordinal) in id order, read from its run files."""
    order, ids = NpyReader(runs / f"{part}.npy"), LineReader(runs / f"{part}.ids")
    while len(local := order.take(step)):
        for line, ordinal in zip(ids.take(len(local)), (local + base).tolist(), strict=True):
            yield json.loads(line), part, ordinal


def _merge_ids(folders: list[Path], bases: list[int], work: Path) -> None:
    """``id_order.npy`` and ``id_rank.npy`` from a k-way merge of the partitions' ids (a
    repeated id is an error), streamed from disk: each partition's ids in id order are written
    to run files first, one partition at a time; the merge reads the runs a chunk at a time and
    writes the order as it goes, and each partition's positions in it, which become the ranks
    partition by partition. Memory: a few chunks per partition, never the corpus's ids."""
    runs = work / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    runs.mkdir()
    for p, folder in enumerate(folders):
        part = load_arrays(folder)
        order = np.argsort(load_npy(folder / "id_rank.npy", mmap=False), kind="stable")
        np.save(runs / f"{p}.npy", order)
        with (runs / f"{p}.ids").open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(part.ids[i]) + "\n" for i in order.tolist())
        del part, order  # its mappings go with it
    step = max(64, _MERGE_ROWS // max(1, len(folders)))
    positions = [array("q") for _ in folders]
    previous: str | None = None
    with NpyWriter(work / "id_order.npy") as out:
        chunk = array("q")
        runs_in_order = (_id_run(runs, p, b, step) for p, b in enumerate(bases[:-1]))
        for doc_id, p, ordinal in heapq.merge(*runs_in_order):
            if doc_id == previous:
                raise ValueError(f"duplicate document id {doc_id!r}")
            previous = doc_id
            positions[p].append(out.count + len(chunk))
            chunk.append(ordinal)
            if len(chunk) >= _ID_CHUNK:
                out.write(chunk)
                chunk = array("q")
            if len(positions[p]) >= step:
                _append_to(runs / f"{p}.pos", positions[p])
        out.write(chunk)
    with NpyWriter(work / "id_rank.npy") as rank:
        for p in range(len(folders)):
            _append_to(runs / f"{p}.pos", positions[p])
            order = load_npy(runs / f"{p}.npy", mmap=False)
            ranks = np.empty(len(order), dtype=np.int64)
            ranks[order] = np.fromfile(runs / f"{p}.pos", dtype=np.int64)
            rank.write(ranks)
    shutil.rmtree(runs)


def _append_to(path: Path, values: array[int]) -> None:
    with path.open("ab") as fh:
        fh.write(values.tobytes())
    del values[:]


def index_manifest(index_dir: Path) -> dict[str, Any]:
    """The manifest of an index directory of this layout (an index an earlier version wrote,
    such as the single-partition layout, is refused)."""
    return read_manifest(Path(index_dir), (FORMAT, FORMAT_VERSION))


def load_index(
    index_dir: Path,
) -> tuple[list[IndexArrays], I64, dict[str, Any], I64, TermDirectory]:
    """Open a partitioned index (its partitions checked against its manifest): its partitions
    in time order, the global id ranks, the manifest, the ordinals in id order and the term
    directory (mapped, as the merge wrote it)."""
    index_dir = Path(index_dir)
    manifest = index_manifest(index_dir)
    parts = [load_arrays(index_dir / "parts" / p["name"], True) for p in manifest["partitions"]]
    for p, entry in zip(parts, manifest["partitions"], strict=True):
        if p.manifest["content_sha256"] != entry["content_sha256"]:
            raise ValueError(f"{index_dir}: partition {entry['name']} does not match the manifest")
    id_rank, id_order = (load_npy(index_dir / n, scattered=True) for n in _RANK_FILES)
    return parts, id_rank, manifest, id_order, TermDirectory.mapped(index_dir)


# -- appends ----------------------------------------------------------------------------------

Duplicates = Literal["refuse", "skip"]
DUPLICATES: tuple[Duplicates, ...] = ("refuse", "skip")
SKIPPED_DUPLICATE = "duplicate id (skipped)"
# What an index directory holds besides its side files (``dating.json``, ``timestamp_rules.tsv``)
_GLOBALS = frozenset(
    {"manifest.json", *_RANK_FILES, "parts", "threads", "build_report.json"} | set(DIRECTORY_FILES)
)
_SIDE_FILES = frozenset({"dating.json", "timestamp_rules.tsv"})


class NewDocuments:
    """The documents of an append that the index does not hold yet: a repeated id (in the index,
    or earlier in the same append) is refused naming it, or skipped and counted (``skipped``).
    Remembers the append's ids, not the index's (``contains`` looks those up)."""

    def __init__(self, contains: Callable[[str], bool], duplicates: Duplicates = "refuse") -> None:
        if duplicates not in DUPLICATES:
            raise ValueError(f"duplicates: expected refuse or skip, got {duplicates!r}")
        self._contains = contains
        self._duplicates = duplicates
        self._seen: set[str] = set()
        self.skipped = 0

    def __call__(self, documents: Iterable[Document]) -> Iterator[Document]:
        for doc in documents:
            if doc.id in self._seen or self._contains(doc.id):
                if self._duplicates == "refuse":
                    raise ValueError(f"duplicate document id {doc.id!r}")
                self.skipped += 1
                continue
            self._seen.add(doc.id)
            yield doc


def _append_dir(index_dir: Path) -> Path:
    return index_dir.with_name(f".{index_dir.name}.appending")


def _put_back(index_dir: Path) -> None:
    """An index moved aside by a swap that was killed between its two renames goes back."""
    if index_dir.exists():
        return
    aside = [
        p
        for p in index_dir.parent.glob(f".{index_dir.name}.old-*")
        if (p / "manifest.json").is_file()
    ]
    if len(aside) == 1:
        os.replace(aside[0], index_dir)


@contextlib.contextmanager
def _claimed_work_dir(index_dir: Path) -> Iterator[Path]:
    """The append's work directory, emptied (a killed append's leftovers go) and held under an
    exclusive lock for the append: a second append at once is refused."""
    work = _append_dir(index_dir)
    for _ in range(3):
        work.mkdir(exist_ok=True)
        fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise FileExistsError(f"{index_dir}: another append is running") from None
        if not _same_folder(fd, work):  # it became the index since (an append finished)
            os.close(fd)
            continue
        try:
            for leftover in work.iterdir():
                if leftover.is_dir() and not leftover.is_symlink():
                    shutil.rmtree(leftover)
                else:
                    leftover.unlink()
            yield work
        except BaseException:
            if _same_folder(fd, work):  # not yet renamed onto the index
                shutil.rmtree(work, ignore_errors=True)
            raise
        finally:
            os.close(fd)  # the lock goes with it
        return
    raise FileExistsError(f"{index_dir}: another append is running")


def _same_folder(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def _link_tree(src: Path, dst: Path) -> None:
    """``src`` reproduced at ``dst`` with hard links (a copy where links cannot be made): a
    partition is never written in place, so sharing its files with the old index is safe."""
    dst.mkdir(parents=True)
    for entry in src.iterdir():
        if entry.is_dir():
            _link_tree(entry, dst / entry.name)
            continue
        try:
            os.link(entry, dst / entry.name)
        except OSError:
            shutil.copy2(entry, dst / entry.name)


def append_partitioned(
    documents: Iterable[Document],
    index_dir: Path,
    contains: Callable[[str], bool],
    options: BuildOptions,
    *,
    duplicates: Duplicates = "refuse",
    side_files: Callable[[Path], None] | None = None,
) -> None:
    """Add ``documents`` to the index in ``index_dir`` (``contains``: whether it holds an id):
    the months they fall in indexed again, the others hard-linked, the global pieces merged as
    a build merges them, all in a work directory (``side_files(work)`` adds the side files)
    that replaces the index when complete. Repeated ids: ``NewDocuments``."""
    index_dir = Path(index_dir)
    _put_back(index_dir)
    check_replaceable(index_dir, options.kind)
    manifest = load_index(index_dir)[2]
    for entry in index_dir.iterdir():
        if entry.name not in _GLOBALS | _SIDE_FILES and entry.name != MARKER:
            # dense vectors and approximate indexes would be stale: not kept silently
            raise ValueError(
                f"{index_dir / entry.name}: appends keep only the BM25 index and its side "
                "files; build the index again (with its embedder) instead"
            )
    try:
        with _claimed_work_dir(index_dir) as work:
            new = NewDocuments(contains, duplicates)
            _append(new(documents), new, index_dir, work, options, side_files, manifest)
    except OSError as exc:
        if exc.errno in _DISK_FULL:
            shutil.rmtree(_append_dir(index_dir), ignore_errors=True)
        raise


def _append(
    documents: Iterable[Document],
    new: NewDocuments,
    index_dir: Path,
    work: Path,
    options: BuildOptions,
    side_files: Callable[[Path], None] | None,
    manifest: dict[str, Any],
) -> None:
    clock = _PhaseClock()
    workers = options.worker_count()
    spool = _Spool(work / "spool")
    indexed: dict[str, list[str]] = {}  # the index's partitions by month
    for entry in manifest["partitions"]:
        indexed.setdefault(month_of_partition(str(entry["name"])), []).append(str(entry["name"]))
    from pastcast.progress import ProgressReporter

    with ProgressReporter("docs", enabled=options.progress) as bar:
        task = bar.add_task("reading documents", total=None)
        _fill(spool, documents, lambda count: bar.update(task, completed=count))
        bar.remove_task(task)
        added = dict(spool.counts)
        touched = sorted(set(added) & set(indexed))
        for month in touched:  # the month's indexed documents join its new ones
            with spool.path(month).open("ab") as fh:
                for name in indexed[month]:
                    old = load_arrays(index_dir / "parts" / name)
                    for line in old.lines():
                        fh.write(line)
                        spool.counts[month] += 1
                    del old
        split_spool(spool.path, spool.counts)
        clock.lap("read")
        (work / "parts").mkdir()
        untouched = sorted(set(indexed) - set(added))
        kept = [name for month in untouched for name in indexed[month]]
        for name in kept:
            _link_tree(index_dir / "parts" / name, work / "parts" / name)
        for name in _SIDE_FILES:
            if (index_dir / name).is_file():
                os.link(index_dir / name, work / name)  # replaced, never written in place
        counts = dict(spool.counts)
        _index_months(
            sorted(counts),
            counts,
            work,
            spool,
            None,
            workers,
            bar.update,
            bar.add_task,
            options.runner,
        )
        clock.lap("index")
        known = {  # the digests of the months kept as they were
            month_of_partition(str(e["name"])): str(e["month_sha256"])
            for e in manifest["partitions"]
            if "month_sha256" in e and month_of_partition(str(e["name"])) in untouched
        }
        merged = _merge_globals(work, sorted(kept + list(counts)), bar, known)
    if side_files is not None:
        side_files(work)

    def all_removed() -> dict[str, int]:
        out = dict(options.removed())
        if new.skipped:
            out[SKIPPED_DUPLICATE] = new.skipped
        return out

    def all_notes() -> list[str]:
        lines = [
            f"append: {sum(added.values())} documents, {len(touched)} indexed months reindexed, "
            f"{len(set(added) - set(indexed))} new months, {len(untouched)} kept as they were"
        ]
        return lines + list(options.notes())

    reported = replace(options, removed=all_removed, notes=all_notes)
    _finish(work, index_dir, merged, clock, 0, workers, True, reported, len(kept))
