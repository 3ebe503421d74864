"""The built-in sources (registered by reference in ``_registry``): JSON lines, the Wikipedia
current-events archive, Reddit dumps, Parquet article tables, CC-News crawls and feed spools."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from datetime import date
from pathlib import Path

from pastcast.corpus.sources._ccnews import CCNewsReport, read_ccnews
from pastcast.corpus.sources._dumps import ZstdMissing, check_readable, dump_files
from pastcast.corpus.sources._feed import spool_documents, spool_files
from pastcast.corpus.sources._jsonl import LoadReport, read_jsonl_documents
from pastcast.corpus.sources._parquet import ArticleTableReport, read_article_table
from pastcast.corpus.sources._reddit import RedditReport, read_reddit
from pastcast.corpus.sources._registry import SideFile, SourceRun
from pastcast.corpus.sources._wcep import WcepReport, read_wcep
from pastcast.errors import FieldError

RULES_NAME = "timestamp_rules.tsv"


def _exists(path: Path, what: str = "file or folder") -> None:
    ok = path.is_file() if what == "file" else path.is_dir() if what == "folder" else path.exists()
    if not ok:
        raise FieldError("", f"{path}: no such {what}")


def jsonl_source(path: Path, *, lenient: bool = False) -> SourceRun:
    """JSON lines, one document a line; ``lenient`` skips malformed lines (counted by reason)."""
    _exists(path, "file")
    report = LoadReport()
    docs = read_jsonl_documents(path, lenient=lenient, report=report)
    return SourceRun(docs, skipped=lambda: dict(report.reasons))


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


def reddit_source(path: Path) -> SourceRun:
    """Reddit dumps (a file or a folder; plain, gzip or zstandard JSON lines)."""
    _exists(path)
    try:
        for file in dump_files(path):
            check_readable(file)
    except (FileNotFoundError, ZstdMissing) as exc:
        raise FieldError("", str(exc)) from None
    report = RedditReport()
    return SourceRun(read_reddit(path, report=report), report.lines)


def parquet_source(path: Path) -> SourceRun:
    """Parquet article tables (a file or a folder)."""
    _exists(path)
    report = ArticleTableReport()
    return SourceRun(read_article_table(path, report=report), report.lines)


def ccnews_source(path: Path, *, workdir: Path) -> SourceRun:
    """CC-News style crawls (JSON lines or WARC); keeps the timestamp rule of each document."""
    _exists(path)
    files = [path] if path.is_file() else list(path.iterdir())
    warc = any(f.name.endswith((".warc", ".warc.gz")) for f in files)
    if warc and importlib.util.find_spec("warcio") is None:
        raise FieldError(
            "", f"{path}: reading WARC needs the 'warc' extra (pip install 'pastcast[warc]')"
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
        raise FieldError("", f"{path}: no feed spool here (no items-*.jsonl files)")
    return SourceRun(spool_documents(path, by_first_seen=by_first_seen))


def feed_source(path: Path) -> SourceRun:
    """A feed spool (``pastcast corpus feed``): each item dated by its feed's time when that is
    not later than when pastcast first saw it, else by that first sight."""
    return _spool(path, by_first_seen=False)


def feed_seen_source(path: Path) -> SourceRun:
    """A feed spool with every item dated by when pastcast first saw it (replays of live
    rounds: exactly what had been fetched by each cutoff)."""
    return _spool(path, by_first_seen=True)
