"""The feed spool (docs/corpus.md, "Live feeds") read back as dated documents; a line without its
newline, the tail of a write cut short by a crash, is never read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from pastcast import safejson
from pastcast.errors import FieldError
from pastcast.records import DatedBy, Document, Record, UtcDatetime
from pastcast.validation import first_problem

DateProvenance = Literal["published", "updated", "first_seen"]
"""Which time dated an item: the feed's published or updated time, or pastcast's fetch time."""

SPOOL_GLOB = "items-*.jsonl"
_DATED_BY: dict[str, DatedBy] = {
    "published": "published",
    "updated": "modified",
    "first_seen": "first_seen",
}


class FeedItem(Record):
    """One version of one feed item, as the spool holds it."""

    id: str = Field(min_length=1)
    timestamp: UtcDatetime
    title: str = ""
    text: str
    source: str = ""
    url: str | None = None
    feed: str = Field(min_length=1)
    key: str = Field(min_length=1)
    """What identifies the item across fetches: its guid (RSS) or id (Atom), else its link."""
    version: int = Field(ge=1)
    digest: str = Field(min_length=1)
    """sha256 of the title and text: a changed digest under one key is a new version."""
    first_seen: UtcDatetime
    published: UtcDatetime | None = None
    updated: UtcDatetime | None = None
    date_provenance: DateProvenance
    clamped: bool = False
    """The feed's date was later than ``first_seen`` (in the future, or after the fetch)."""

    @model_validator(mode="after")
    def _never_before_seen_unless_dated(self) -> FeedItem:
        # The one invariant every reader relies on: nothing is dated after pastcast saw it, and
        # only a feed's own earlier date puts it before that.
        if self.timestamp > self.first_seen:
            raise ValueError("timestamp is after first_seen")
        if self.date_provenance == "first_seen" and self.timestamp != self.first_seen:
            raise ValueError("dated by first_seen but timestamp differs from it")
        if self.version > 1 and self.timestamp != self.first_seen:
            raise ValueError("a later version is dated by its own first_seen")
        return self

    def document(self, *, by_first_seen: bool = False) -> Document:
        # The feed's updated time is the document's last modification; first sight is pastcast's.
        dated_by: DatedBy = "first_seen" if by_first_seen else _DATED_BY[self.date_provenance]
        return Document(
            id=self.id,
            timestamp=self.first_seen if by_first_seen else self.timestamp,
            dated_by=dated_by,
            title=self.title,
            text=self.text,
            source=self.source,
            url=self.url,
        )


def spool_files(spool: Path) -> list[Path]:
    """The spool's item files, oldest day first."""
    return sorted(p for p in spool.glob(SPOOL_GLOB) if p.is_file())


def _complete_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.endswith(b"\n"):
                return  # the tail of an append cut short: never read
            if line.strip():
                yield lineno, line


def read_feed_spool(spool: Path | str) -> Iterator[FeedItem]:
    """Every complete item line of the spool, in the order written (``FieldError`` for one that
    is malformed)."""
    for path in spool_files(Path(spool)):
        for lineno, line in _complete_lines(path):
            try:
                yield FeedItem.model_validate(safejson.loads(line))
            except json.JSONDecodeError as exc:
                raise FieldError("", f"{path}:{lineno}: record: invalid JSON ({exc.msg})") from None
            except ValidationError as exc:
                raise FieldError("", first_problem(exc, f"{path}:{lineno}")) from None


def spool_documents(spool: Path | str, *, by_first_seen: bool = False) -> Iterator[Document]:
    for item in read_feed_spool(spool):
        yield item.document(by_first_seen=by_first_seen)
