"""Corpus coverage of a dataset's forecast steps: does a step's cutoff have fresh evidence?

A step is *covered* when the corpus holds at least one document dated in the ``window_days``
before its cutoff (visible at the cutoff, by the one visibility rule). A step whose cutoff lies
after the corpus's last document, or in a gap of it, gets no fresh evidence: its research tools
search a stale archive. Counting uses ``count_before`` only, so it works for every backend and
reads no text; each distinct cutoff is counted once.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from typing import Any

from pastcast.corpus import CorpusBackend
from pastcast.cutoff import cutoff_for_day
from pastcast.dataset import Dataset
from pastcast.records import StepSpec

COVERAGE_DAYS = 7
"""Default window: a step is covered by a document of the 7 days before its cutoff."""

UNSPLIT = "(unsplit)"
"""The split name of events a dataset assigns to none."""

_FAR_PAST, _FAR_FUTURE = date(1900, 1, 1), date(9999, 1, 1)


@dataclass(frozen=True)
class SplitCoverage:
    split: str
    steps: int
    covered: int

    @property
    def uncovered(self) -> int:
        return self.steps - self.covered


@dataclass(frozen=True)
class CoverageReport:
    window_days: int
    documents: int
    first_day: date | None
    """The day of the corpus's first document (None for an empty corpus)."""
    last_day: date | None
    splits: tuple[SplitCoverage, ...]
    uncovered: frozenset[tuple[str, int]]
    """(event id, step index) of every step without fresh evidence."""

    def is_covered(self, step: StepSpec) -> bool:
        return (step.event_id, step.step_index) not in self.uncovered

    def warnings(self) -> list[str]:
        """One line per split with uncovered steps."""
        span = (
            f"the corpus runs {self.first_day} .. {self.last_day}"
            if self.last_day is not None
            else "the corpus is empty"
        )
        return [
            f"corpus coverage: {s.split}: {s.uncovered} of {s.steps} steps "
            f"({s.uncovered / s.steps:.0%}) have no document in the {self.window_days} days "
            f"before their cutoff ({span})"
            for s in self.splits
            if s.uncovered
        ]

    def as_json(self) -> dict[str, Any]:
        return {
            "window_days": self.window_days,
            "documents": self.documents,
            "first_day": self.first_day,
            "last_day": self.last_day,
            "by_split": {
                s.split: {"steps": s.steps, "covered": s.covered, "uncovered": s.uncovered}
                for s in self.splits
            },
        }


def _first_day_where(pred: Callable[[date], bool], lo: date, hi: date) -> date:
    """The first day in [lo, hi] where a monotone ``pred`` holds (``hi`` when only there)."""
    days = range((hi - lo).days)
    return lo + timedelta(days=bisect_left(days, True, key=lambda k: pred(lo + timedelta(k))))


def corpus_days(backend: CorpusBackend) -> tuple[int, date | None, date | None]:
    """How many documents, and the days of the first and the last (by bisection on counts)."""
    total = backend.count_before(cutoff_for_day(_FAR_FUTURE))
    if total == 0:
        return 0, None, None
    first = _first_day_where(
        lambda d: backend.count_before(cutoff_for_day(d + timedelta(days=1))) > 0,
        _FAR_PAST,
        _FAR_FUTURE,
    )
    end = _first_day_where(
        lambda d: backend.count_before(cutoff_for_day(d)) >= total, first, _FAR_FUTURE
    )
    return total, first, end - timedelta(days=1)


def step_coverage(
    dataset: Dataset, backend: CorpusBackend, *, window_days: int = COVERAGE_DAYS
) -> CoverageReport:
    """Which steps of ``dataset`` have a document of ``backend`` in the window before them."""
    if window_days < 1:
        raise ValueError(f"window_days: at least 1, got {window_days}")
    before = cache(backend.count_before)  # each distinct cutoff counted once
    window = timedelta(days=window_days)
    uncovered = {
        (s.event_id, s.step_index)
        for s in dataset.steps
        if before(s.cutoff) - before(s.cutoff - window) <= 0
    }
    split_of = {e.id: dataset.splits.get(e.id, UNSPLIT) for e in dataset.events}
    steps = Counter(split_of[s.event_id] for s in dataset.steps)
    missing = Counter(split_of[e] for e, _ in uncovered)
    total, first, last = corpus_days(backend)
    return CoverageReport(
        window_days=window_days,
        documents=total,
        first_day=first,
        last_day=last,
        splits=tuple(
            SplitCoverage(split, n, n - missing[split]) for split, n in sorted(steps.items())
        ),
        uncovered=frozenset(uncovered),
    )
