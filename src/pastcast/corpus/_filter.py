"""The filter block of a search (Hindcast's), applied by every backend before ranking and never
widening what the cutoff admits (docs/corpus.md, "Search filters"). Each field's meaning is
defined here once, in ``SearchFilter.matches``; the conformance checks compare the backends'
own implementations (index maps, SQL) with it."""

from __future__ import annotations

import re
import string
from datetime import UTC, datetime
from typing import Literal

from pydantic import field_validator

from pastcast.cutoff import as_utc
from pastcast.records import Document, Record, UtcDatetime

DocType = Literal["submission", "comment"]
DOC_TYPES: tuple[DocType, ...] = ("submission", "comment")
_MONTH = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")
_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def ascii_lower(text: str) -> str:
    """``text`` with ASCII letters lowercased only: the same in Python and in SQL (``translate``),
    whatever the database's locale."""
    return text.translate(_LOWER)


def month_bounds(month: str) -> tuple[datetime, datetime]:
    """``[first instant, first instant of the next month)`` of a ``YYYY-MM`` UTC month."""
    found = _MONTH.fullmatch(month)
    if found is None:
        raise ValueError(f"month {month!r}: expected YYYY-MM")
    year, mon = int(found.group(1)), int(found.group(2))
    start = datetime(year, mon, 1, tzinfo=UTC)
    end = datetime(year + mon // 12, mon % 12 + 1, 1, tzinfo=UTC)
    return start, end


class SearchFilter(Record):
    """What a search may rank besides the cutoff; an empty filter ranks every visible document."""

    doc_type: DocType | None = None
    source: str | None = None
    author: str | None = None
    month: str | None = None
    since: UtcDatetime | None = None

    @field_validator("source")
    @classmethod
    def _source(cls, value: str | None) -> str | None:
        if value is None:
            return None
        cleaned = value.strip().strip("/")
        if not cleaned:
            raise ValueError("source: empty (leave it out to search every source)")
        return cleaned

    @field_validator("author")
    @classmethod
    def _author(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("author: empty (leave it out to search every author)")
        return value

    @field_validator("month")
    @classmethod
    def _month(cls, value: str | None) -> str | None:
        if value is not None:
            month_bounds(value)  # raises on a malformed month
        return value

    def is_empty(self) -> bool:
        return self == _EMPTY

    def time_range(self) -> tuple[datetime | None, datetime | None]:
        """The time window ``[lower, upper)`` of ``month`` and ``since`` (None: unbounded)."""
        lower, upper = self.since, None
        if self.month is not None:
            start, upper = month_bounds(self.month)
            lower = start if lower is None else max(lower, start)
        return lower, upper

    def source_matches(self, source: str) -> bool:
        """Whether a document's ``source`` is this filter's, whole or as its last path segments
        (``politics`` and ``r/politics`` match ``reddit/r/politics``), ASCII letters caseless."""
        if self.source is None:
            return True
        want, have = ascii_lower(self.source), ascii_lower(source)
        return have == want or have.endswith("/" + want)

    def matches(self, doc: Document) -> bool:
        """Whether ``doc`` passes the filter (the cutoff is checked separately, always)."""
        if self.doc_type is not None and bool(doc.parent_id) != (self.doc_type == "comment"):
            return False
        if self.author is not None and doc.author != self.author:
            return False
        if not self.source_matches(doc.source):
            return False
        lower, upper = self.time_range()
        ts = as_utc(doc.timestamp)
        return (lower is None or ts >= lower) and (upper is None or ts < upper)


_EMPTY = SearchFilter()
