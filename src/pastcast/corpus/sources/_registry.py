"""Document sources by name: what ``pastcast corpus build KIND:PATH`` reads.

A source is a factory registered on ``sources`` (entry-point group ``pastcast.sources``) called
as ``factory(path, **options)``; it checks what it can up front (the path exists, the optional
package a file needs is installed) and returns a ``SourceRun``, or simply an iterable of
``Document``s. A factory that writes a side file (a report kept next to the index) declares a
``workdir`` parameter: a folder on the index's file system that ``open_source`` passes to it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import IO, Any

from pastcast.corpus.sources._ccnews import CCNewsReport, read_ccnews
from pastcast.corpus.sources._dumps import ZstdMissing, check_readable, dump_files
from pastcast.corpus.sources._feed import spool_documents, spool_files
from pastcast.corpus.sources._hindsight import ContentScreen
from pastcast.corpus.sources._jsonl import LoadReport, read_jsonl_documents
from pastcast.corpus.sources._parquet import ArticleTableReport, read_article_table
from pastcast.corpus.sources._reddit import RedditReport, read_reddit
from pastcast.corpus.sources._wcep import WcepReport, read_wcep
from pastcast.records import Document
from pastcast.registry import Registry

__all__ = ["SideFile", "SourceRun", "SourceUnavailable", "open_source", "sources"]

RULES_NAME = "timestamp_rules.tsv"


class SourceUnavailable(ValueError):
    """A source that cannot be read here: a missing path, or an optional package it needs."""


@dataclass(frozen=True)
class SideFile:
    """A file a source writes while it is read, moved into the index directory as ``name``."""

    name: str
    path: Path
    handle: IO[str]
    what: str


def _no_lines() -> list[str]:
    return []


@dataclass
class SourceRun:
    """An opened source: its documents, its report (complete once the documents are consumed)
    and the side files to keep with the index."""

    documents: Iterator[Document]
    report_lines: Callable[[], list[str]] = _no_lines
    side_files: tuple[SideFile, ...] = field(default=())
    skipped: Callable[[], dict[str, int]] = dict
    """Malformed input skipped so far, by reason (complete once the documents are consumed)."""

    def finish(self, out: Path) -> list[str]:
        """Move the side files into ``out``; one line per file saying where it went."""
        lines = []
        for side in self.side_files:
            side.handle.close()
            # A rename when the work folder is on the index's file system, a copy otherwise.
            shutil.move(side.path, out / side.name)
            lines.append(f"{side.what}: {out / side.name}")
        return lines

    def discard(self) -> None:
        for side in self.side_files:
            side.handle.close()
            side.path.unlink(missing_ok=True)


sources: Registry[SourceRun | Iterable[Document]] = Registry("source")
"""Document sources by kind (the ``KIND`` of ``KIND:PATH``)."""


def open_source(
    kind: str,
    path: str | Path,
    *,
    workdir: Path | None = None,
    screen: bool | None = None,
    **options: Any,
) -> SourceRun:
    """Open ``path`` with the source ``kind`` and its options (checked against the factory).

    ``workdir`` is where side files are written until ``SourceRun.finish`` moves them (a fresh
    temporary folder when not given); only factories with a ``workdir`` parameter get it.
    ``screen``: pass the documents through the content screen (``ContentScreen``: flagged
    documents are left out and counted in the report); by default on, unless the source is asked
    to ``include_flagged``.
    """
    entry = sources.get(kind)
    if "workdir" in entry.parameters():
        options["workdir"] = workdir or Path(tempfile.mkdtemp(prefix="pastcast-source-"))
    opened = sources.build(kind, Path(path), **options)
    run = opened if isinstance(opened, SourceRun) else SourceRun(iter(opened))
    if not (screen if screen is not None else not options.get("include_flagged", False)):
        return run
    content = ContentScreen()
    return SourceRun(
        content.screen(run.documents),
        lambda: run.report_lines() + content.lines(),
        run.side_files,
        run.skipped,
    )


def _exists(path: Path, what: str = "file or folder") -> None:
    ok = path.is_file() if what == "file" else path.is_dir() if what == "folder" else path.exists()
    if not ok:
        raise SourceUnavailable(f"{path}: no such {what}")


@sources.register("jsonl")
def jsonl_source(path: Path, *, lenient: bool = False) -> SourceRun:
    """JSON lines, one document a line; ``lenient`` skips malformed lines (counted by reason)."""
    _exists(path, "file")
    report = LoadReport()
    docs = read_jsonl_documents(path, lenient=lenient, report=report)
    return SourceRun(docs, skipped=lambda: dict(report.reasons))


@sources.register("wcep")
def wcep_source(
    path: Path,
    *,
    since: date | None = None,
    until: date | None = None,
    include_flagged: bool = False,
) -> SourceRun:
    """The Wikipedia current-events archive (a folder of daily files), days ``since``-``until``."""
    _exists(path, "folder")
    report = WcepReport()
    docs = read_wcep(path, since=since, until=until, include_flagged=include_flagged, report=report)
    return SourceRun(docs, report.lines)


@sources.register("reddit")
def reddit_source(path: Path) -> SourceRun:
    """Reddit dumps (a file or a folder; plain, gzip or zstandard JSON lines)."""
    _exists(path)
    try:
        for file in dump_files(path):
            check_readable(file)
    except (FileNotFoundError, ZstdMissing) as exc:
        raise SourceUnavailable(str(exc)) from None
    report = RedditReport()
    return SourceRun(read_reddit(path, report=report), report.lines)


@sources.register("parquet")
def parquet_source(path: Path) -> SourceRun:
    """Parquet article tables (a file or a folder)."""
    _exists(path)
    report = ArticleTableReport()
    return SourceRun(read_article_table(path, report=report), report.lines)


@sources.register("ccnews")
def ccnews_source(path: Path, *, workdir: Path) -> SourceRun:
    """CC-News style crawls (JSON lines or WARC); keeps the timestamp rule of each document."""
    _exists(path)
    files = [path] if path.is_file() else list(path.iterdir())
    warc = any(f.name.endswith((".warc", ".warc.gz")) for f in files)
    if warc and importlib.util.find_spec("warcio") is None:
        raise SourceUnavailable(
            f"{path}: reading WARC needs the 'warc' extra (pip install 'pastcast[warc]')"
        )
    report = CCNewsReport()
    workdir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".pastcast-", suffix=f".{RULES_NAME}", dir=workdir)
    handle = os.fdopen(fd, "w", encoding="utf-8")
    side = SideFile(RULES_NAME, Path(name), handle, "timestamp rule of each document")
    return SourceRun(read_ccnews(path, report=report, rules_out=handle), report.lines, (side,))


def _spool(path: Path, by_first_seen: bool) -> SourceRun:
    _exists(path, "folder")
    if not spool_files(path):
        raise SourceUnavailable(f"{path}: no feed spool here (no items-*.jsonl files)")
    return SourceRun(spool_documents(path, by_first_seen=by_first_seen))


@sources.register("feed")
def feed_source(path: Path) -> SourceRun:
    """A feed spool (``pastcast corpus feed``): each item dated by its feed's time when that is
    not later than when pastcast first saw it, else by that first sight."""
    return _spool(path, by_first_seen=False)


@sources.register("feed-seen")
def feed_seen_source(path: Path) -> SourceRun:
    """A feed spool with every item dated by when pastcast first saw it (replays of live
    rounds: exactly what had been fetched by each cutoff)."""
    return _spool(path, by_first_seen=True)
