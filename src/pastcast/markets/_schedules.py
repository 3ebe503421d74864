"""Forecast-date schedules: which cutoffs an event is forecast at (``(event, beliefs, resolution,
news_counts) -> StepSpec``s, registered on ``schedules``, entry-point group
``pastcast.schedules``; docs/datasets.md, "Schedules"). Every schedule here ends its window at
the *effective* end, min(close day, resolution instant), and ``guard_steps`` drops any step at or
after the effective resolution, whatever the schedule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Protocol

from pastcast.cutoff import DayConvention, cutoff_for_day, step_precedes_resolution
from pastcast.records import DailyBelief, Event, Resolution, StepSpec
from pastcast.registry import Registry


class Schedule(Protocol):
    @property
    def name(self) -> str: ...

    def __call__(
        self,
        event: Event,
        beliefs: Sequence[DailyBelief],
        resolution: Resolution,
        news_counts: Mapping[date, int] | None = None,
    ) -> tuple[StepSpec, ...]: ...


schedules: Registry[Schedule] = Registry("schedule")
"""Forecast-date schedules by name."""
# The non-anticipating schedules, by reference (``_causal`` builds on this module's).
schedules.add("causal-dojo", "pastcast.markets._causal:CausalDojoSchedule")
schedules.add("causal-lookback", "pastcast.markets._causal:CausalLookbackSchedule")


def guard_steps(
    steps: Sequence[datetime], event: Event, resolution: Resolution
) -> tuple[StepSpec, ...]:
    """Sorted unique cutoffs strictly before the effective resolution, as numbered steps."""
    kept = sorted({c for c in steps if step_precedes_resolution(c, resolution.resolved_at)})
    return tuple(StepSpec(event_id=event.id, step_index=i, cutoff=c) for i, c in enumerate(kept))


def _end_day(event: Event, resolution: Resolution) -> date:
    """The last day a market could inform a forecast: the close day or the resolution day."""
    return min(event.close_time.date(), resolution.resolved_at.date())


def _last_day(day: date, convention: DayConvention, resolution: Resolution) -> date:
    """``day``, or the latest day before it whose cutoff precedes the resolution (under the
    inclusive convention the day before the resolution day is the resolution instant itself)."""
    while not step_precedes_resolution(cutoff_for_day(day, convention), resolution.resolved_at):
        day -= timedelta(days=1)
    return day


def dojo_step_count(n_eligible: int, lo: int = 3, hi: int = 10) -> int:
    """T_Q = clamp(round(sqrt(n_Q)), 3, 10), never more than the eligible days."""
    if n_eligible <= 0:
        return 0
    t = max(lo, min(hi, math.floor(math.sqrt(n_eligible) + 0.5)))
    return min(t, n_eligible)


def grid_days(
    event: Event, beliefs: Sequence[DailyBelief], at_first_belief: bool, end: date, buffer: int
) -> list[date]:
    """The days from the grid start to ``buffer`` days before ``end``: the market's opening,
    or with ``at_first_belief`` the day after its first priced day (known from that day on)."""
    start = event.open_time.date()
    if at_first_belief:
        if not beliefs:
            return []
        start = max(start, min(b.day for b in beliefs) + timedelta(days=1))
    last = end - timedelta(days=buffer)
    return [start + timedelta(days=i) for i in range((last - start).days + 1)]


def fraction_cutoffs(
    start: datetime,
    end: datetime,
    last: date,
    fractions: Sequence[float],
    convention: DayConvention = DayConvention.START_OF_DAY,
) -> list[datetime]:
    """The cutoffs at ``fractions`` of [start, end], floored to a day and at most ``last``."""
    days = [min((start + (end - start) * f).date(), last) for f in fractions]
    return [cutoff_for_day(day, convention) for day in days if day >= start.date()]


def equal_count_bins(n: int, t: int) -> list[range]:
    """Forecast-Dojo's ``t`` contiguous bins over ``n`` days: equal counts, the first ``n % t``
    bins one day longer."""
    base, extra = divmod(n, t)
    bins: list[range] = []
    lo = 0
    for b in range(t):
        hi = lo + base + (1 if b < extra else 0)
        bins.append(range(lo, hi))
        lo = hi
    return bins


def movement(prev: DailyBelief | None, cur: DailyBelief | None, kind: str) -> float:
    """|dYES| for binary events, half the L1 distance for multi-option; 0 if a day is missing."""
    if prev is None or cur is None:
        return 0.0
    if kind == "binary":
        if "Yes" not in prev.probs or "Yes" not in cur.probs:
            return 0.0
        return abs(cur.probs["Yes"] - prev.probs["Yes"])
    labels = set(prev.probs) & set(cur.probs)
    return 0.5 * sum(abs(cur.probs[k] - prev.probs[k]) for k in labels)


@schedules.register("dojo")
@dataclass(frozen=True)
class DojoSchedule:
    """Forecast-Dojo A.3: T equal-count bins over the eligible days, one best-scoring day each.

    Eligible days run from the grid start to ``buffer_days`` before the effective end. With
    ``start_at_first_belief`` the grid starts the day after the first priced day (sources whose
    series begin after the market opened, so that every step has a market reference).
    """

    buffer_days: int = 2
    w_movement: float = 0.7
    w_news: float = 0.3
    w_position: float = 1e-3
    min_steps: int = 3
    max_steps: int = 10
    start_at_first_belief: bool = False
    convention: DayConvention = DayConvention.START_OF_DAY
    name: str = "dojo"

    def eligible_days(
        self, event: Event, beliefs: Sequence[DailyBelief], resolution: Resolution
    ) -> list[date]:
        end = _end_day(event, resolution)
        return grid_days(event, beliefs, self.start_at_first_belief, end, self.buffer_days)

    def __call__(
        self,
        event: Event,
        beliefs: Sequence[DailyBelief],
        resolution: Resolution,
        news_counts: Mapping[date, int] | None = None,
    ) -> tuple[StepSpec, ...]:
        days = self.eligible_days(event, beliefs, resolution)
        n = len(days)
        t = dojo_step_count(n, self.min_steps, self.max_steps)
        if t == 0:
            return ()
        by_day = {b.day: b for b in beliefs}
        moves = [
            movement(by_day.get(d - timedelta(days=1)), by_day.get(d), event.kind) for d in days
        ]
        news = [float((news_counts or {}).get(d, 0)) for d in days]
        m_max, c_max = max(moves), max(news)
        scores = [
            self.w_movement * (moves[j] / m_max if m_max > 0 else 0.0)
            + self.w_news * (news[j] / c_max if c_max > 0 else 0.0)
            + self.w_position * (j / (n - 1) if n > 1 else 0.0)
            for j in range(n)
        ]
        chosen: list[datetime] = []
        for days_of_bin in equal_count_bins(n, t):
            best = max(days_of_bin, key=lambda j: (scores[j], j))
            chosen.append(cutoff_for_day(days[best], self.convention))
        return guard_steps(chosen, event, resolution)


@schedules.register("hindcast")
@dataclass(frozen=True)
class HindcastSchedule:
    """Hindcast: one t0, the day before close (or resolution), capped at the corpus end date.

    Under the inclusive convention, the latest day whose cutoff still precedes the resolution.
    """

    corpus_end: date | None = None
    convention: DayConvention = DayConvention.START_OF_DAY
    name: str = "hindcast"

    def __call__(
        self,
        event: Event,
        beliefs: Sequence[DailyBelief],
        resolution: Resolution,
        news_counts: Mapping[date, int] | None = None,
    ) -> tuple[StepSpec, ...]:
        day = _end_day(event, resolution) - timedelta(days=1)
        if self.corpus_end is not None:
            day = min(day, self.corpus_end)
        day = _last_day(day, self.convention, resolution)
        if day < event.open_time.date():
            return ()
        return guard_steps([cutoff_for_day(day, self.convention)], event, resolution)


@schedules.register("lookback")
@dataclass(frozen=True)
class LookbackSchedule:
    """Hindcast's sweep: t0 at fixed fractions of each market's open-to-resolution span.

    t0 is floored to a UTC day start and is at most the day before the effective end, so the
    100% point is the last full day before resolution.
    """

    fractions: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
    convention: DayConvention = DayConvention.START_OF_DAY
    name: str = "lookback"

    def __call__(
        self,
        event: Event,
        beliefs: Sequence[DailyBelief],
        resolution: Resolution,
        news_counts: Mapping[date, int] | None = None,
    ) -> tuple[StepSpec, ...]:
        end = min(event.close_time, resolution.resolved_at)
        last = _last_day(
            _end_day(event, resolution) - timedelta(days=1), self.convention, resolution
        )
        cutoffs = fraction_cutoffs(event.open_time, end, last, self.fractions, self.convention)
        return guard_steps(cutoffs, event, resolution)
