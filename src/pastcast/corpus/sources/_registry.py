"""Document sources by name (``pastcast corpus build KIND:PATH``): factories registered on
``sources`` (entry-point group ``pastcast.sources``), called as ``factory(path, **options)``,
returning a ``SourceRun`` or an iterable of ``Document``s. One that writes a side file declares a
``workdir`` parameter (a folder on the index's file system)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pastcast.corpus.sources._hindsight import ContentScreen
from pastcast.records import Document
from pastcast.registry import Registry


@dataclass(frozen=True)
class SideFile:
    """A file a source writes while it is read, moved into the index directory as ``name``."""

    name: str
    path: Path
    handle: IO[str]
    what: str


@dataclass
class SourceRun:
    """An opened source: its documents, its report (complete once the documents are consumed)
    and the side files to keep with the index."""

    documents: Iterator[Document]
    report_lines: Callable[[], list[str]] = list
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
# The built-in sources, by reference: reading one imports its reader only when it is used.
sources.add("jsonl", "pastcast.corpus.sources._builtin:jsonl_source")
sources.add("wcep", "pastcast.corpus.sources._builtin:wcep_source")
sources.add("reddit", "pastcast.corpus.sources._builtin:reddit_source")
sources.add("parquet", "pastcast.corpus.sources._builtin:parquet_source")
sources.add("ccnews", "pastcast.corpus.sources._builtin:ccnews_source")
sources.add("feed", "pastcast.corpus.sources._builtin:feed_source")
sources.add("feed-seen", "pastcast.corpus.sources._builtin:feed_seen_source")


def open_source(
    kind: str,
    path: str | Path,
    *,
    workdir: Path | None = None,
    screen: bool | None = None,
    **options: Any,
) -> SourceRun:
    """Open ``path`` with the source ``kind`` and its options (checked against the factory).
    ``workdir``: where side files are written until ``SourceRun.finish`` moves them (default: a
    fresh temporary folder). ``screen``: the content screen, on unless ``include_flagged``."""
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
