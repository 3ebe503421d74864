"""The source-independent intermediate record every importer produces: one resolved market."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date

from pastcast.cutoff import last_complete_day
from pastcast.records import DailyBelief, Event, Resolution


@dataclass(frozen=True)
class DayActivity:
    """Trading activity of one UTC day on the leg of the realised outcome."""

    trades: int
    volume: float


@dataclass(frozen=True)
class MarketHistory:
    """A resolved event with its outcome and its pre-resolution daily beliefs.

    ``activity`` is ``None`` when the source has no trade counts or volumes (the faithful-day
    filter then records "not available" instead of guessing).
    """

    event: Event
    resolution: Resolution
    beliefs: tuple[DailyBelief, ...]
    activity: Mapping[date, DayActivity] | None = None


def guard_beliefs(
    beliefs: Iterable[DailyBelief], resolution: Resolution
) -> tuple[DailyBelief, ...]:
    """Only beliefs whose whole UTC day ended before the effective resolution, sorted by day."""
    last = last_complete_day(resolution.resolved_at)
    return tuple(sorted((b for b in beliefs if b.day <= last), key=lambda b: b.day))


def outcome_series(history: MarketHistory) -> dict[date, float]:
    """m_{Q,t}(Y): the market probability of the realised label per day where it is priced."""
    label = history.resolution.label
    return {b.day: b.probs[label] for b in history.beliefs if label in b.probs}
