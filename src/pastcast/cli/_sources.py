"""The ``reddit:``, ``parquet:`` and ``ccnews:`` sources of ``pastcast corpus build``: opening
them with their checks done up front, and their reports once the index is built."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pastcast.cli._common import fail
from pastcast.corpus import (
    ArticleTableReport,
    CCNewsReport,
    RedditReport,
    ZstdMissing,
    read_article_table,
    read_ccnews,
    read_reddit,
)
from pastcast.corpus.sources import check_readable, dump_files
from pastcast.records import Document

__all__ = ["SOURCE_KINDS", "SourceRun", "open_source"]

SOURCE_KINDS = ("reddit", "parquet", "ccnews")
RULES_NAME = "timestamp_rules.tsv"


@dataclass
class SourceRun:
    """An opened source: its documents, its report, and a side file to move into the index."""

    documents: Iterator[Document]
    report_lines: Callable[[], list[str]]
    side_file: tuple[Path, IO[str]] | None = None

    def finish(self, out: Path) -> list[str]:
        """Move the side file into the built index; the report's lines."""
        lines = []
        if self.side_file is not None:
            tmp, handle = self.side_file
            handle.close()
            os.replace(tmp, out / RULES_NAME)
            lines.append(f"timestamp rule of each document: {out / RULES_NAME}")
        return lines + self.report_lines()

    def discard(self) -> None:
        if self.side_file is not None:
            tmp, handle = self.side_file
            handle.close()
            tmp.unlink(missing_ok=True)


def open_source(kind: str, path: str, out: Path) -> SourceRun:
    """Open a source of one of ``SOURCE_KINDS`` (a clear one-line failure when it cannot be
    read here)."""
    where = Path(path)
    if not where.exists():
        fail(f"{path}: no such file or folder")
    if kind == "reddit":
        try:
            for file in dump_files(where):
                check_readable(file)
        except (FileNotFoundError, ZstdMissing) as exc:
            fail(str(exc))
        reddit = RedditReport()
        return SourceRun(read_reddit(where, report=reddit), reddit.lines)
    if kind == "parquet":
        table = ArticleTableReport()
        return SourceRun(read_article_table(where, report=table), table.lines)
    if kind == "ccnews":
        files = [where] if where.is_file() else list(where.iterdir())
        warc = any(f.name.endswith((".warc", ".warc.gz")) for f in files)
        if warc and importlib.util.find_spec("warcio") is None:
            fail(f"{path}: reading WARC needs the 'warc' extra (pip install 'pastcast[warc]')")
        cc = CCNewsReport()
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.{RULES_NAME}")
        handle = tmp.open("w", encoding="utf-8")
        docs = read_ccnews(where, report=cc, rules_out=handle)
        return SourceRun(docs, cc.lines, (tmp, handle))
    fail(f"unknown source kind {kind!r}")
