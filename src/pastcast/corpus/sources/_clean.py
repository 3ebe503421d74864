"""Cleaning crawled pages before indexing: the timestamp cascade, quality filters and duplicate
suppression of docs/corpus.md ("Cleaning crawled pages"). Input comes in non-decreasing
timestamp order (checked), so memory is bounded by the dedup state."""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pastcast.cutoff import parse_publication_time
from pastcast.records import DatedBy, Document, Record

YEAR_RANGE = (2010, 2030)
DATED_BY: dict[str, DatedBy] = {  # the Document.dated_by of each rule of the cascade
    "date_published": "published",
    "date_modified": "modified",
    "crawl_time": "crawled",
}
TITLE_WINDOW = timedelta(days=7)
_BOILERPLATE = re.compile(
    r"(enable javascript|javascript is disabled|accept (all )?cookies|cookie policy|"
    r"subscribe to (read|continue)|sign in to continue|page not found|404 not found|"
    r"access denied|are you a robot)",
    re.IGNORECASE,
)


class RawPage(Record):
    """A crawled page with its candidate dates as found (text, not yet trusted)."""

    id: str
    url: str | None = None
    title: str = ""
    text: str
    date_published: str | None = None
    date_modified: str | None = None
    crawl_time: str | None = None
    source: str = ""


@dataclass
class CleanReport:
    kept: int = 0
    removed: Counter[str] = field(default_factory=Counter)
    timestamp_rule: Counter[str] = field(default_factory=Counter)


def choose_timestamp(page: RawPage) -> tuple[datetime, str] | None:
    """The first usable candidate of the cascade and the rule that chose it."""
    for rule in ("date_published", "date_modified", "crawl_time"):
        raw = getattr(page, rule)
        if not raw:
            continue
        try:
            ts = parse_publication_time(raw)
        except ValueError:
            continue
        if YEAR_RANGE[0] <= ts.year <= YEAR_RANGE[1]:
            return ts, rule
    return None


def quality_problem(title: str, text: str) -> str | None:
    """Why a page is not worth indexing (``too_short``, ``boilerplate``, ``repetitive``)."""
    words = text.lower().split()
    if len(text) < 50 or len(words) < 8:
        return "too_short"
    if _BOILERPLATE.search(text) and len(words) < 150:
        return "boilerplate"
    if len(words) >= 50 and len(set(words)) / len(words) < 0.3:
        return "repetitive"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 5 and Counter(lines).most_common(1)[0][1] / len(lines) > 0.3:
        return "repetitive"
    return None


def canonical_url(url: str) -> str:
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    query = sorted(
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith(("utm_", "fbclid", "gclid"))
    )
    path = parts.path.rstrip("/") or "/"
    return urlunsplit(
        (
            "https" if parts.scheme in ("http", "https") else parts.scheme,
            host,
            path,
            urlencode(query),
            "",
        )
    )


class Deduplicator:
    """Streaming duplicate detection; call ``check`` in timestamp order."""

    def __init__(self, *, threshold_bands: tuple[int, int] = (8, 16)) -> None:
        from datasketch import MinHashLSH  # imported here: only cleaning needs it

        self._urls: set[str] = set()
        self._titles: dict[str, datetime] = {}
        self._recent: deque[tuple[datetime, str]] = deque()
        self._lsh = MinHashLSH(num_perm=128, params=threshold_bands)
        self._n = 0

    def check(
        self, page_id: str, ts: datetime, url: str | None, title: str, text: str
    ) -> str | None:
        """The duplicate reason, or ``None`` (the page is then remembered)."""
        from datasketch import MinHash

        while self._recent and ts - self._recent[0][0] > TITLE_WINDOW:
            old_ts, old_title = self._recent.popleft()
            if self._titles.get(old_title) == old_ts:
                del self._titles[old_title]
        canon = canonical_url(url) if url else None
        if canon and canon in self._urls:
            return "duplicate_url"
        norm_title = " ".join(title.lower().split())
        if norm_title and norm_title in self._titles:
            return "duplicate_title"
        words = text.lower().split()
        shingles = {" ".join(words[i : i + 5]).encode() for i in range(max(1, len(words) - 4))}
        mh = MinHash(num_perm=128, seed=1)
        mh.update_batch(shingles)
        if self._lsh.query(mh):
            return "near_duplicate"
        self._lsh.insert(f"{self._n}:{page_id}", mh)
        self._n += 1
        if canon:
            self._urls.add(canon)
        if norm_title:
            self._titles[norm_title] = ts
            self._recent.append((ts, norm_title))
        return None


class CleanedPage(Record):
    """A kept page and the cascade rule that chose its timestamp."""

    document: Document
    timestamp_rule: str


def clean_pages(
    pages: Iterable[RawPage], report: CleanReport | None = None
) -> Iterator[CleanedPage]:
    report = report if report is not None else CleanReport()
    dedup = Deduplicator()
    last: datetime | None = None
    for page in pages:
        chosen = choose_timestamp(page)
        if chosen is None:
            report.removed["no_usable_timestamp"] += 1
            continue
        ts, rule = chosen
        if last is not None and ts < last:
            raise ValueError(f"page {page.id!r}: timestamps must not decrease ({ts} < {last})")
        last = ts
        problem = quality_problem(page.title, page.text) or dedup.check(
            page.id, ts, page.url, page.title, page.text
        )
        if problem:
            report.removed[problem] += 1
            continue
        report.kept += 1
        report.timestamp_rule[rule] += 1
        doc = Document(
            id=page.id,
            timestamp=ts,
            title=page.title,
            text=page.text,
            url=page.url,
            source=page.source,
            dated_by=DATED_BY[rule],
        )
        yield CleanedPage(document=doc, timestamp_rule=rule)
