"""Schedules are registered components: built by name, options checked, extensible."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

import pytest
from markets_factories import binary

from pastcast.cutoff import cutoff_for_day
from pastcast.errors import FieldError
from pastcast.markets import (
    DojoSchedule,
    HindcastSchedule,
    LookbackSchedule,
    build_dataset,
    guard_steps,
    make_schedule,
    schedules,
)
from pastcast.records import DailyBelief, Event, Resolution, StepSpec


@dataclass(frozen=True)
class FirstDaySchedule:
    """One step on the day after the market opened."""

    name: str = "first-day"

    def __call__(
        self,
        event: Event,
        beliefs: Sequence[DailyBelief],
        resolution: Resolution,
        news_counts: Mapping[date, int] | None = None,
    ) -> tuple[StepSpec, ...]:
        day = event.open_time.date() + timedelta(days=1)
        return guard_steps([cutoff_for_day(day)], event, resolution)


@pytest.fixture
def first_day() -> Iterator[None]:
    schedules.add("first-day", FirstDaySchedule)
    yield
    schedules.remove("first-day")


def test_built_in_schedules_by_name() -> None:
    assert {"dojo", "hindcast", "lookback"} <= set(schedules.names())
    assert schedules.group == "pastcast.schedules"
    assert make_schedule("dojo", start_at_first_belief=True) == DojoSchedule(
        start_at_first_belief=True
    )
    end = date(2025, 6, 5)
    assert make_schedule("hindcast", corpus_end=end) == HindcastSchedule(corpus_end=end)
    assert make_schedule("lookback", corpus_end=end) == LookbackSchedule()
    assert schedules.build("lookback", fractions=(0.5,)) == LookbackSchedule(fractions=(0.5,))
    with pytest.raises(FieldError, match=r"schedule 'lookback': .*'buffer_days'"):
        schedules.build("lookback", buffer_days=3)
    with pytest.raises(ValueError, match=r"unknown schedule 'weekly' \(known: .*dojo"):
        make_schedule("weekly")


def test_a_registered_schedule_builds_datasets(first_day: None) -> None:
    sched = make_schedule("first-day", corpus_end=date(2025, 6, 5))
    ds, _ = build_dataset(
        [binary("q", [0.3, 0.5, 0.4, 0.6, 0.7, 0.8, 0.7, 0.9, 0.8, 0.9])], name="t", schedule=sched
    )
    assert [s.cutoff.date() for s in ds.steps] == [date(2025, 6, 2)]
