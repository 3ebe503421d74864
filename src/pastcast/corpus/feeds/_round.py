"""One fetch round: every feed fetched, its items dated by the rule that keeps a feed from
backdating anything into an earlier cutoff (docs/corpus.md, "Live feeds"), the new ones appended
to the spool."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import httpx

from pastcast.corpus.feeds._config import FeedConfig, FeedsFile
from pastcast.corpus.feeds._fetch import FeedFetchError, fetch_body
from pastcast.corpus.feeds._spool import FeedState, SpoolWriter
from pastcast.corpus.feeds._xml import RawItem, parse_feed
from pastcast.corpus.sources import DateProvenance, FeedItem, LoadReport, read_jsonl_documents
from pastcast.errors import FieldError

FeedStatus = Literal["ok", "not-modified", "error"]


@dataclass(frozen=True)
class FeedReport:
    """What one feed gave this round."""

    name: str
    status: FeedStatus
    items: int = 0
    new: int = 0
    versions: int = 0
    seen: int = 0
    clamped: int = 0
    """New items whose feed date was later than their fetch (in the future, or after it)."""
    undated: int = 0
    """New items without any date, dated by their fetch."""
    skipped: dict[str, int] = field(default_factory=dict)
    attempts: int = 0
    error: str | None = None

    def line(self) -> str:
        if self.status == "error":
            return f"{self.name}: error: {self.error}"
        if self.status == "not-modified":
            return f"{self.name}: not modified"
        text = (
            f"{self.name}: {self.items} items, {self.new} new, {self.versions} new versions, "
            f"{self.seen} seen before, {self.clamped} clamped to fetch time, "
            f"{self.undated} dated by fetch time"
        )
        if self.skipped:
            text += f", {sum(self.skipped.values())} skipped"
        return text


@dataclass(frozen=True)
class FeedRound:
    at: datetime
    spool: Path
    feeds: tuple[FeedReport, ...]

    @property
    def written(self) -> int:
        return sum(f.new + f.versions for f in self.feeds)

    @property
    def errors(self) -> int:
        return sum(f.status == "error" for f in self.feeds)

    def as_dict(self) -> dict[str, Any]:
        """The round as JSON: its time, spool, counts and every feed's report."""
        return {
            "at": self.at.isoformat(),
            "spool": str(self.spool),
            "written": self.written,
            "errors": self.errors,
            "feeds": [vars(f) for f in self.feeds],
        }


def date_item(
    published: datetime | None, updated: datetime | None, first_seen: datetime
) -> tuple[datetime, DateProvenance, bool]:
    """A new item's corpus time, which time it is, and whether the feed's was clamped."""
    claimed, provenance = (
        (published, "published") if published is not None else (updated, "updated")
    )
    if claimed is None:
        return first_seen, "first_seen", False
    if claimed > first_seen:
        return first_seen, "first_seen", True
    return claimed, provenance, False  # type: ignore[return-value]


def _digest(title: str, text: str) -> str:
    return hashlib.sha256(f"{title}\0{text}".encode()).hexdigest()


def _item_id(feed: str, key: str, version: int) -> str:
    base = f"{feed}:{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    return base if version == 1 else f"{base}.v{version}"


def _folder_items(feed: FeedConfig) -> tuple[list[RawItem], dict[str, int]]:
    """The documents of a drop folder's ``*.jsonl`` files (the JSONL source's shape); a line
    still being written is skipped until it is complete."""
    assert feed.folder is not None
    if not feed.folder.is_dir():
        raise FeedFetchError(f"{feed.folder}: no such folder")
    items: list[RawItem] = []
    report = LoadReport()
    for path in sorted(feed.folder.glob("*.jsonl")):
        if path.stat().st_size > feed.max_bytes:
            report.reasons[f"file over max_bytes={feed.max_bytes}"] += 1
            continue
        try:
            for doc in read_jsonl_documents(path, lenient=True, report=report):
                items.append(
                    RawItem(doc.id, doc.title, doc.text, doc.url, doc.timestamp, None, doc.source)
                )
        except (FieldError, OSError) as exc:
            raise FeedFetchError(str(exc)) from None
    return items, dict(report.reasons)


def _feed_round(
    feed: FeedConfig,
    writer: SpoolWriter,
    state: dict[str, FeedState],
    client: httpx.Client,
    clock: Callable[[], datetime],
    sleep: Callable[[float], None],
) -> FeedReport:
    skipped: dict[str, int] = {}
    attempts = 1
    fresh: FeedState | None = None
    try:
        if feed.folder is not None:
            raw, skipped = _folder_items(feed)
        else:
            old = state.get(feed.name, FeedState())
            got = fetch_body(
                feed, client, etag=old.etag, last_modified=old.last_modified, sleep=sleep
            )
            attempts = got.attempts
            if got.body is None:
                return FeedReport(feed.name, "not-modified", attempts=attempts)
            raw = parse_feed(got.body)
            fresh = FeedState(got.etag, got.last_modified)
    except (FeedFetchError, FieldError) as exc:
        where = "" if str(exc).startswith(("GET ", "/")) else f"{feed.location}: "
        return FeedReport(feed.name, "error", attempts=attempts, error=f"{where}{exc}")
    # Received now: the instant pastcast first has these items.
    first_seen = clock().astimezone(UTC)
    if writer.latest_seen is not None and first_seen < writer.latest_seen:
        first_seen = writer.latest_seen
    counts = {"new": 0, "versions": 0, "seen": 0, "clamped": 0, "undated": 0}
    out: list[FeedItem] = []
    pending: dict[str, set[str]] = {}
    for item in raw:
        digest = _digest(item.title, item.text)
        key = item.key or f"sha256:{digest}"
        known = writer.known.get((feed.name, key))
        digests = (known.digests if known else set()) | pending.get(key, set())
        if digest in digests:
            counts["seen"] += 1
            continue
        version = (known.versions if known else 0) + sum(1 for i in out if i.key == key) + 1
        if version == 1:
            timestamp, provenance, clamped = date_item(item.published, item.updated, first_seen)
        else:  # an edit is public from when it was seen, whatever the feed now claims
            claimed = item.published or item.updated
            timestamp, provenance = first_seen, "first_seen"
            clamped = claimed is not None and claimed > first_seen
        counts["new" if version == 1 else "versions"] += 1
        counts["clamped"] += clamped
        counts["undated"] += item.published is None and item.updated is None
        pending.setdefault(key, set()).add(digest)
        out.append(
            FeedItem(
                id=_item_id(feed.name, key, version),
                timestamp=timestamp,
                title=item.title,
                text=item.text,
                source=item.source or feed.source or feed.name,
                url=item.url,
                feed=feed.name,
                key=key,
                version=version,
                digest=digest,
                first_seen=first_seen,
                published=item.published,
                updated=item.updated,
                date_provenance=provenance,
                clamped=clamped,
            )
        )
    writer.append(out)
    if fresh is not None:
        state[feed.name] = fresh  # only after the items it covers are on disk
        writer.save_state(state)
    return FeedReport(
        feed.name,
        "ok",
        items=len(raw),
        new=counts["new"],
        versions=counts["versions"],
        seen=counts["seen"],
        clamped=counts["clamped"],
        undated=counts["undated"],
        skipped=skipped,
        attempts=attempts,
    )


def _now() -> datetime:
    return datetime.now(UTC)


def fetch_round(
    feeds: FeedsFile,
    spool: Path,
    *,
    clock: Callable[[], datetime] = _now,
    client: httpx.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> FeedRound:
    """Fetch every feed once into the spool folder (which must exist); a feed that fails is
    one error line in its report and the others go on. ``SpoolBusy`` when another fetch holds
    the spool."""
    at = clock().astimezone(UTC)
    own = client is None
    http = client or httpx.Client(follow_redirects=True, max_redirects=5)
    try:
        with SpoolWriter(spool) as writer:
            state = writer.state()
            reports = [_feed_round(feed, writer, state, http, clock, sleep) for feed in feeds.feed]
    finally:
        if own:
            http.close()
    return FeedRound(at, spool, tuple(reports))
