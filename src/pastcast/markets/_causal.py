"""Non-anticipating schedules: whether a day is a forecast step depends only on what was public
before that day's cutoff, plus the event being still open (docs/datasets.md, "Schedules").

The other schedules fit their steps to the *effective* end, min(close, resolution), and Dojo's
picks the day of the bin's largest own move: the spacing and placement of steps then tell the
agent what is coming. These use the *scheduled* close and prices and news of days that ended
before the cutoff only; a step at or after the resolution is dropped (``guard_steps``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from pastcast.cutoff import DayConvention, cutoff_for_day, last_complete_day
from pastcast.markets._schedules import (
    dojo_step_count,
    equal_count_bins,
    fraction_cutoffs,
    grid_days,
    guard_steps,
    movement,
)
from pastcast.records import DailyBelief, Event, Resolution, StepSpec


@dataclass(frozen=True)
class CausalDojoSchedule:
    """Forecast-Dojo's bins over the scheduled window, each step chosen by a stopping rule.

    Eligible days run from the grid start to ``buffer_days`` before the *scheduled* close day;
    T = clamp(round(sqrt(n)), ``min_steps``, ``max_steps``) equal-count bins, as in Dojo. In each
    bin the step is the first day whose last visible day (the last day that ended before its
    cutoff) moved the market by at least ``move_threshold`` (or, with ``news_threshold``, carried
    at least that many documents), else the bin's last day. With ``start_at_first_belief`` the
    grid starts the day after the first priced day (known from that day on).
    """

    buffer_days: int = 2
    move_threshold: float = 0.05
    news_threshold: int | None = None
    min_steps: int = 3
    max_steps: int = 10
    start_at_first_belief: bool = False
    convention: DayConvention = DayConvention.START_OF_DAY
    name: str = "causal-dojo"

    def eligible_days(self, event: Event, beliefs: Sequence[DailyBelief]) -> list[date]:
        end = event.close_time.date()
        return grid_days(event, beliefs, self.start_at_first_belief, end, self.buffer_days)

    def _triggered(
        self,
        day: date,
        kind: str,
        by_day: Mapping[date, DailyBelief],
        news_counts: Mapping[date, int] | None,
    ) -> bool:
        seen = last_complete_day(cutoff_for_day(day, self.convention))
        move = movement(by_day.get(seen - timedelta(days=1)), by_day.get(seen), kind)
        if move >= self.move_threshold > 0:
            return True
        return (
            self.news_threshold is not None
            and news_counts is not None
            and news_counts.get(seen, 0) >= self.news_threshold
        )

    def __call__(
        self,
        event: Event,
        beliefs: Sequence[DailyBelief],
        resolution: Resolution,
        news_counts: Mapping[date, int] | None = None,
    ) -> tuple[StepSpec, ...]:
        days = self.eligible_days(event, beliefs)
        t = dojo_step_count(len(days), self.min_steps, self.max_steps)
        if t == 0:
            return ()
        by_day = {b.day: b for b in beliefs}
        chosen: list[datetime] = []
        for days_of_bin in equal_count_bins(len(days), t):
            in_bin = [days[j] for j in days_of_bin]
            pick = next(
                (d for d in in_bin if self._triggered(d, event.kind, by_day, news_counts)),
                in_bin[-1],
            )
            chosen.append(cutoff_for_day(pick, self.convention))
        return guard_steps(chosen, event, resolution)


@dataclass(frozen=True)
class CausalLookbackSchedule:
    """Cutoffs at fixed fractions of each market's open-to-*scheduled*-close span.

    t0 is floored to a UTC day start and is at most the day before the close day, so the 100%
    point is Hindcast's t0 (the day before close) for every event still open then. An event
    that resolved earlier keeps only the points before its resolution.
    """

    fractions: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
    name: str = "causal-lookback"

    def __call__(
        self,
        event: Event,
        beliefs: Sequence[DailyBelief],
        resolution: Resolution,
        news_counts: Mapping[date, int] | None = None,
    ) -> tuple[StepSpec, ...]:
        last = event.close_time.date() - timedelta(days=1)
        cutoffs = fraction_cutoffs(event.open_time, event.close_time, last, self.fractions)
        return guard_steps(cutoffs, event, resolution)
