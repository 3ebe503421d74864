"""The in-memory benchmark dataset every source is converted into and the runner loads."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime

from pastcast.cutoff import is_visible, last_complete_day
from pastcast.records import DailyBelief, Event, Resolution, StepSpec

__all__ = ["Dataset"]


@dataclass(frozen=True)
class Dataset:
    """Events with their resolutions, daily market beliefs and scheduled forecast steps.

    ``id`` is a versioned identifier (e.g. ``world-v2:seed=0``) recorded in every run log.
    Resolutions are held here for grading only; ``pastcast.env`` never hands them to an agent.
    """

    id: str
    events: tuple[Event, ...]
    resolutions: Mapping[str, Resolution]
    beliefs: Mapping[str, tuple[DailyBelief, ...]]
    steps: tuple[StepSpec, ...]
    splits: Mapping[str, str] = field(default_factory=dict)
    _by_id: dict[str, Event] = field(init=False, repr=False, compare=False)
    _belief_days: dict[str, list[date]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_id = {e.id: e for e in self.events}
        if len(by_id) != len(self.events):
            raise ValueError(f"dataset {self.id}: duplicate event ids")
        for step in self.steps:
            if step.event_id not in by_id:
                raise ValueError(f"dataset {self.id}: step for unknown event {step.event_id!r}")
        sorted_beliefs = {k: tuple(sorted(v, key=lambda b: b.day)) for k, v in self.beliefs.items()}
        object.__setattr__(self, "beliefs", sorted_beliefs)
        object.__setattr__(self, "_by_id", by_id)
        object.__setattr__(
            self, "_belief_days", {k: [b.day for b in v] for k, v in sorted_beliefs.items()}
        )

    def event(self, event_id: str) -> Event:
        try:
            return self._by_id[event_id]
        except KeyError:
            raise KeyError(f"dataset {self.id}: no event {event_id!r}") from None

    def steps_of(self, event_id: str) -> tuple[StepSpec, ...]:
        return tuple(
            sorted((s for s in self.steps if s.event_id == event_id), key=lambda s: s.step_index)
        )

    def event_ids_with_steps(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for s in self.steps:
            seen.setdefault(s.event_id, None)
        return tuple(seen)

    def beliefs_before(self, event_id: str, cutoff: datetime) -> tuple[DailyBelief, ...]:
        """Daily beliefs whose whole day ended by ``cutoff`` and before the resolution."""
        days = self._belief_days.get(event_id)
        if not days:
            return ()
        last = last_complete_day(cutoff)
        res = self.resolutions.get(event_id)
        if res is not None:
            last = min(last, last_complete_day(res.resolved_at))
        end = bisect.bisect_right(days, last)
        return self.beliefs[event_id][:end]

    def market_at(self, event_id: str, cutoff: datetime) -> DailyBelief | None:
        """The latest market belief visible at ``cutoff`` (None when there is none)."""
        visible = self.beliefs_before(event_id, cutoff)
        return visible[-1] if visible else None

    def resolved_before(self, cutoff: datetime) -> tuple[Resolution, ...]:
        """Resolutions already public at ``cutoff`` (strictly before it)."""
        return tuple(r for r in self.resolutions.values() if is_visible(r.resolved_at, cutoff))

    def with_steps(self, steps: Iterable[StepSpec]) -> Dataset:
        return Dataset(
            self.id, self.events, self.resolutions, self.beliefs, tuple(steps), self.splits
        )
