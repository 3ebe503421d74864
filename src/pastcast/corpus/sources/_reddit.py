"""Documents from Reddit dumps in the Pushshift JSON-lines shape (submissions and comments):
the field mapping, the filters (Hindcast's engagement and length floors, each removal counted by
reason) and the file order are in docs/corpus.md, "Reddit dumps". Memory: one line at a time,
plus the ids kept (to drop repeats) and the submission titles."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pastcast import safejson
from pastcast.corpus.sources._dumps import SkipCounter, check_readable, dump_files, open_text
from pastcast.records import Document

_GONE = frozenset({"[deleted]", "[removed]"})
_URL = re.compile(r"https?://\S+|www\.\S+", re.IGNORECASE)
_ID = re.compile(r"^[A-Za-z0-9_]+$")
_TITLE_CHARS = 300


@dataclass(frozen=True)
class RedditFilters:
    """Engagement and length floors; ``RedditFilters.none()`` keeps every well-formed post."""

    min_score: int | None = 5
    min_comments: int | None = 3
    min_comment_chars: int = 5
    max_link_share: float | None = 0.5
    min_words: int = 20
    bots: frozenset[str] = frozenset()

    @classmethod
    def none(cls) -> RedditFilters:
        return cls(None, None, 0, None, 0)


@dataclass
class RedditReport:
    """What was read, kept, removed by a filter and skipped as malformed."""

    lines_read: int = 0
    submissions: int = 0
    comments: int = 0
    removed: SkipCounter = field(default_factory=SkipCounter)
    malformed: SkipCounter = field(default_factory=SkipCounter)

    @property
    def kept(self) -> int:
        return self.submissions + self.comments

    def lines(self) -> list[str]:
        return [
            f"lines read {self.lines_read}; kept {self.submissions} submissions and "
            f"{self.comments} comments",
            *self.removed.lines("removed"),
            *self.malformed.lines("malformed, skipped"),
        ]


class _Malformed(ValueError):
    pass


class _Removed(ValueError):
    pass


def _timestamp(value: Any) -> datetime:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _Malformed(f"field created_utc: expected unix seconds, got {type(value).__name__}")
    try:
        seconds = float(value)
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise _Malformed(f"field created_utc: not unix seconds: {value!r}") from None


def _int(obj: dict[str, Any], name: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise _Malformed(f"field {name}: not an integer: {value!r}") from None


def _ref(obj: dict[str, Any], name: str, prefixes: tuple[str, ...]) -> str:
    value = obj.get(name)
    if not isinstance(value, str) or not value.startswith(prefixes) or not _ID.match(value):
        raise _Malformed(f"field {name}: expected {' or '.join(prefixes)}<id>, got {value!r}")
    return value[3:]


def _non_url_chars(text: str) -> tuple[int, int]:
    """(non-URL, URL) non-whitespace character counts."""
    link = sum(len(m.group()) for m in _URL.finditer(text))
    total = len("".join(text.split()))
    return total - link, link


class _Reader:
    def __init__(self, filters: RedditFilters, report: RedditReport) -> None:
        self.f = filters
        self.report = report
        self.titles: dict[str, str] = {}
        self.kept: set[str] = set()
        self.bots = {b.lower() for b in filters.bots}

    def document(self, obj: Any) -> Document:
        if not isinstance(obj, dict):
            raise _Malformed("record: expected a JSON object")
        if "title" in obj:
            is_comment = False
        elif "body" in obj:
            is_comment = True
        else:
            raise _Malformed("record: neither a submission (title) nor a comment (body)")
        raw_id = obj.get("id")
        if not isinstance(raw_id, str) or not _ID.match(raw_id):
            raise _Removed("no_stable_id")
        ts = _timestamp(obj.get("created_utc"))
        sub = obj.get("subreddit")
        source = f"reddit/r/{sub}" if isinstance(sub, str) and sub else "reddit"
        link = obj.get("permalink")
        url = f"https://www.reddit.com{link}" if isinstance(link, str) and link else None
        if is_comment:
            thread = _ref(obj, "link_id", ("t3_",))
            parent = _ref(obj, "parent_id", ("t1_", "t3_")) if "parent_id" in obj else thread
            known = self.titles.get(thread)
            title = f"Re: {known}" if known else ""
            text, own = obj.get("body"), None
        else:
            thread, parent = raw_id, None
            own = obj.get("title")
            if not isinstance(own, str):
                raise _Malformed(f"field title: expected a string, got {type(own).__name__}")
            self.titles.setdefault(raw_id, html.unescape(own)[:_TITLE_CHARS])
            title = html.unescape(own)
            text = obj.get("selftext") or ""
        if not isinstance(text, str):
            name = "body" if is_comment else "selftext"
            raise _Malformed(f"field {name}: expected a string, got {type(text).__name__}")
        score = _int(obj, "score")
        self._filter(obj, is_comment, text, own, score)
        doc_id = f"reddit:{raw_id}"
        if doc_id in self.kept:
            raise _Removed("duplicate_id")
        self.kept.add(doc_id)
        return Document(
            id=doc_id,
            timestamp=ts,
            title=title,
            text=html.unescape(text),
            source=source,
            url=url,
            thread_id=f"reddit:{thread}",
            author=obj["author"],
            parent_id=f"reddit:{parent}" if parent else None,
            dated_by="published",  # created_utc: the instant of posting
        )

    def _filter(
        self, obj: dict[str, Any], is_comment: bool, text: str, title: str | None, score: int | None
    ) -> None:
        f = self.f
        author = obj.get("author")
        if not isinstance(author, str) or not author or author in _GONE:
            raise _Removed("deleted_author")
        if text.strip() in _GONE:
            raise _Removed("deleted_body")
        if author.lower() in self.bots:
            raise _Removed("bot_author")
        if f.min_score is not None:
            if score is None:
                raise _Malformed("field score: missing")
            if score < f.min_score:
                raise _Removed(f"score_below_{f.min_score}")
        if not is_comment and f.min_comments is not None:
            n = _int(obj, "num_comments")
            if n is not None and n < f.min_comments:
                raise _Removed(f"fewer_than_{f.min_comments}_comments")
        if is_comment:
            plain, link = _non_url_chars(html.unescape(text))
            if plain < f.min_comment_chars:
                raise _Removed(f"comment_under_{f.min_comment_chars}_non_url_chars")
            if f.max_link_share is not None and link > f.max_link_share * (plain + link):
                raise _Removed("comment_mostly_link")
        words = len(text.split()) + (len(title.split()) if title else 0)
        if words < f.min_words:
            raise _Removed(f"fewer_than_{f.min_words}_words")


def read_reddit(
    path: Path | str,
    *,
    filters: RedditFilters | None = None,
    report: RedditReport | None = None,
) -> Iterator[Document]:
    """Yield the kept documents of a dump file or a folder of dumps; ``FileNotFoundError`` or
    ``ZstdMissing`` (a ``.zst`` that cannot be read here) before anything is read."""
    files = dump_files(Path(path))
    for file in files:
        check_readable(file)
    report = report if report is not None else RedditReport()
    reader = _Reader(filters or RedditFilters(), report)
    for file in files:
        with open_text(file) as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                report.lines_read += 1
                where = f"{file}:{lineno}"
                try:
                    try:
                        obj = safejson.loads_line(line)
                    except json.JSONDecodeError as exc:
                        raise _Malformed(f"record: invalid JSON ({exc.msg})") from None
                    doc = reader.document(obj)
                except _Malformed as exc:
                    report.malformed.add(str(exc), where)
                    continue
                except _Removed as exc:
                    report.removed.add(str(exc), where)
                    continue
                if doc.parent_id is None:
                    report.submissions += 1
                else:
                    report.comments += 1
                yield doc
