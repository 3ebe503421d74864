"""Dating provenance of a corpus build: documents counted by the kind of date they carry, those
dated only by crawl or fetch time left out on request (docs/corpus.md, "Dating provenance")."""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from pastcast.records import Document

DATING_NAME = "dating.json"
DatingRule = Literal["any", "metadata", "published"]
DATING_RULES: tuple[DatingRule, ...] = get_args(DatingRule)
CRAWL_DATED = frozenset({"crawled", "fetched"})
UNRECORDED = "unrecorded"


def crawl_dated(doc: Document) -> bool:
    """Dated only by when it was crawled or fetched."""
    return doc.dated_by in CRAWL_DATED


def _allowed(doc: Document, require: DatingRule) -> bool:
    if require == "metadata":
        return not crawl_dated(doc)
    return require != "published" or doc.dated_by == "published"


@dataclass
class DatingReport:
    """Documents kept and left out, by the kind of date they carry."""

    require: DatingRule = "any"
    kept: Counter[str] = field(default_factory=Counter)
    excluded: Counter[str] = field(default_factory=Counter)

    @property
    def flagged(self) -> int:
        """Kept documents dated only by crawl or fetch time."""
        return sum(self.kept[k] for k in CRAWL_DATED)

    def as_json(self) -> dict[str, Any]:
        return {
            "require": self.require,
            "dated_by": dict(sorted(self.kept.items())),
            "crawl_or_fetch_dated": self.flagged,
            "excluded": dict(sorted(self.excluded.items())),
        }

    def lines(self) -> list[str]:
        total = sum(self.kept.values())
        out = [f"dated by {kind}: {n} ({n / total:.1%})" for kind, n in sorted(self.kept.items())]
        if self.flagged:
            out.append(
                f"flagged: {self.flagged} documents dated only by crawl or fetch time (left out "
                "with require publication or metadata dates)"
            )
        out += [
            f"left out (require {self.require}): {n} dated by {kind}"
            for kind, n in sorted(self.excluded.items())
        ]
        return out


def with_dating(run: Any, require: DatingRule = "any") -> Any:
    """``run`` (a ``SourceRun``) with its documents counted by kind of date and, by
    ``require``, filtered; its report gains the counts and its side files ``dating.json``."""
    from pastcast.corpus.sources._registry import SideFile, SourceRun

    report = DatingReport(require)

    def documents() -> Iterator[Document]:
        for doc in run.documents:
            kind = doc.dated_by or UNRECORDED
            if _allowed(doc, require):
                report.kept[kind] += 1
                yield doc
            else:
                report.excluded[kind] += 1

    fd, name = tempfile.mkstemp(prefix=".pastcast-", suffix=f".{DATING_NAME}")
    handle = _JsonOnClose(os.fdopen(fd, "w", encoding="utf-8"), report)
    side = SideFile(DATING_NAME, Path(name), handle, "dating provenance of the documents")  # type: ignore[arg-type]
    return SourceRun(
        documents(),
        lambda: run.report_lines() + report.lines(),
        (*run.side_files, side),
        run.skipped,
    )


class _JsonOnClose:
    """The side file's handle: the counts are complete only once the documents are consumed, so
    they are written when the run finishes (``SourceRun.finish`` closes the handle)."""

    def __init__(self, handle: Any, report: DatingReport) -> None:
        self._handle = handle
        self._report = report

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.write(json.dumps(self._report.as_json(), indent=2) + "\n")
            self._handle.close()


def read_dating(index_dir: Path) -> dict[str, Any] | None:
    """The dating provenance recorded beside an index (None for an index built without it)."""
    path = Path(index_dir) / DATING_NAME
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
