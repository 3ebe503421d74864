"""Screens for documents written (or rewritten) after the date they carry, leakage although the
date looks right: WCEP's day-level ``size_outlier`` (``RollingSize``), the item-level
``later_date_mention`` and the content screen every source passes through (``screen_document``,
``ContentScreen``); the rules are in docs/corpus.md (WCEP's "Hindsight screen") and
docs/audits.md ("The content screen")."""

from __future__ import annotations

import re
import statistics
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from datetime import date, timedelta

from pastcast.records import Document

SIZE_FACTOR = 4.0
WINDOW = 30
_MIN_HISTORY = 7

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_MONTH_NO = {m: i + 1 for i, m in enumerate(_MONTHS)}
_M = "|".join(_MONTHS)
_DATE = re.compile(
    rf"\b(?:(\d{{1,2}}) ({_M}),? (\d{{4}})|({_M}) (\d{{1,2}}),? (\d{{4}})"
    r"|(\d{4})-(\d\d)-(\d\d))\b"
)
_FORWARD = re.compile(
    r"\b(will|until|till|scheduled|rescheduled|postpone\w*|deadline|set to|expected|expects|"
    r"plan\w*|to be|by|from|begin\w*|start\w*|effective|due|through|extend\w*|next|upcoming|"
    r"delay\w*|move\w* to|slated|announce\w* (?:that )?(?:the )?\w+ (?:will|would))\b",
    re.IGNORECASE,
)


def _dates(text: str) -> list[date]:
    out = []
    for m in _DATE.finditer(text):
        g = m.groups()
        try:
            if g[0]:
                out.append(date(int(g[2]), _MONTH_NO[g[1]], int(g[0])))
            elif g[3]:
                out.append(date(int(g[5]), _MONTH_NO[g[3]], int(g[4])))
            else:
                out.append(date(int(g[6]), int(g[7]), int(g[8])))
        except ValueError:
            continue
    return out


def later_date_mention(text: str, day: date) -> bool:
    """True if ``text`` states a date after ``day + 1`` without forward-looking wording."""
    if not any(d > day + timedelta(days=1) for d in _dates(text)):
        return False
    return _FORWARD.search(text) is None


_YEAR = r"(?:19|20)\d\d"
_PERIOD = re.compile(rf"\b({_YEAR})\s*[–—-]\s*({_YEAR}|\d\d)\b")
_SINGLE_YEAR = re.compile(rf"\b({_YEAR})\b")
# numbers that look like years but name something else ("Flight 2059", "Route 2020")
_NOT_A_YEAR = re.compile(r"(?:flight|no\.?|number|route|highway|#|model|type)\s*$", re.IGNORECASE)
_SCHEDULED = re.compile(
    r"\b(elections?|primar(?:y|ies)|caucus(?:es)?|campaign|referendum|census|olympics?|"
    r"paralympics|games|cup|championships?|contest|eurovision|expo|summit|conference|budget|"
    r"season|league|qualification|qualifiers?|tournament|festival|inauguration|term|period|"
    r"fiscal|plan|programme|program|tour|capital of culture|jubilee|draft|target|deadline)\b",
    re.IGNORECASE,
)
_LOOKAHEAD_YEARS = 5


def _later_periods(text: str, year: int) -> bool:
    for m in _PERIOD.finditer(text):
        start, end = int(m.group(1)), m.group(2)
        last = int(end) if len(end) == 4 else start - start % 100 + int(end)
        if last > year and last > start:
            return True
    return False


def _later_year(text: str, year: int) -> bool:
    bare = _PERIOD.sub(" ", text)  # years inside a period are the period rule's
    for m in _SINGLE_YEAR.finditer(bare):
        y = int(m.group(1))
        if year < y <= year + _LOOKAHEAD_YEARS and not _NOT_A_YEAR.search(bare[: m.start()]):
            return True
    return False


_FOUR_DIGITS = re.compile(r"\d{4}")  # every rule below needs a year, or a date's


def screen_document(doc: Document) -> str | None:
    """Why ``doc``'s title or text may describe what happened after its timestamp, or None."""
    if _FOUR_DIGITS.search(doc.title) is None and _FOUR_DIGITS.search(doc.text) is None:
        return None  # one scan, where the rules below take ten (a third of a build's read)
    day = doc.timestamp.date()
    year = day.year
    title_scheduled = _SCHEDULED.search(doc.title) is not None
    if not title_scheduled and _later_periods(doc.title, year):
        return "title_later_period"
    if not title_scheduled and _later_year(doc.title, year):
        return "title_later_year"
    if later_date_mention(doc.title, day):
        return "title_later_date"
    if later_date_mention(doc.text, day):
        return "text_later_date"
    if (
        _later_periods(doc.text, year)
        and _SCHEDULED.search(doc.text) is None
        and _FORWARD.search(doc.text) is None
    ):
        return "text_later_period"
    return None


class ContentScreen:
    """Passes the documents the screen does not flag and counts the others by reason."""

    def __init__(self) -> None:
        self.removed: Counter[str] = Counter()

    def screen(self, documents: Iterable[Document]) -> Iterator[Document]:
        for doc in documents:
            reason = screen_document(doc)
            if reason is None:
                yield doc
            else:
                self.removed[reason] += 1

    def lines(self) -> list[str]:
        """The report line (none when nothing was removed)."""
        if not self.removed:
            return []
        parts = ", ".join(f"{k} {n}" for k, n in sorted(self.removed.items()))
        return [f"content screen: {self.removed.total()} documents removed ({parts})"]


class RollingSize:
    """Rolling median of the sizes of recently *kept* days (flagged days do not raise it)."""

    def __init__(self, window: int = WINDOW, factor: float = SIZE_FACTOR) -> None:
        self._sizes: deque[int] = deque(maxlen=window)
        self.factor = factor

    def is_outlier(self, size: int) -> bool:
        if len(self._sizes) < _MIN_HISTORY:
            return False
        return size > self.factor * statistics.median(self._sizes)

    def keep(self, size: int) -> None:
        self._sizes.append(size)
