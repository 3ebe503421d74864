"""Non-anticipating schedules: the steps before any instant depend only on what was public then.

The property checked: cut the world at an instant T (the event resolves at T instead, and no
price or news of a later day exists); the steps before T must be exactly those the full
history gives before T. A schedule that looks at the resolution, or at prices and news of days
that end after a step's cutoff, fails it for some event.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta

import pytest

from pastcast.cutoff import last_complete_day
from pastcast.markets import (
    CausalDojoSchedule,
    CausalLookbackSchedule,
    DojoSchedule,
    HindcastSchedule,
    LookbackSchedule,
    Schedule,
    make_schedule,
    schedules,
)
from pastcast.markets._history import guard_beliefs
from pastcast.records import DailyBelief, Event, Resolution, StepSpec
from pastcast.world import default_steps

Case = tuple[Event, tuple[DailyBelief, ...], Resolution, dict[date, int]]


def _case(rng: random.Random, i: int) -> Case:
    opened = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(
        days=rng.randrange(30), hours=rng.randrange(24)
    )
    life = rng.randrange(8, 120)
    close = datetime.combine(opened.date() + timedelta(days=life), time(23, 59, 59), tzinfo=UTC)
    resolved = close
    if rng.random() < 0.5:  # resolves early, somewhere in its second half
        resolved = opened + (close - opened) * rng.uniform(0.5, 0.95)
    event = Event(
        id=f"e{i}", title="q", kind="binary", labels=("Yes", "No"), open_time=opened,
        close_time=close,
    )  # fmt: skip
    p, beliefs, news = 0.5, [], {}
    day = opened.date()
    while day <= last_complete_day(resolved):
        p = min(0.99, max(0.01, p + rng.gauss(0, 0.08)))
        beliefs.append(DailyBelief(event_id=event.id, day=day, probs={"Yes": p, "No": 1 - p}))
        news[day] = rng.randrange(20)
        day += timedelta(days=1)
    res = Resolution(event_id=event.id, label="Yes", resolved_at=resolved)
    return event, tuple(beliefs), res, news


def _cut(case: Case, at: datetime) -> Case:
    """The same event as if it had resolved at ``at``: nothing of a later day exists."""
    event, beliefs, res, news = case
    early = res.model_copy(update={"resolved_at": at})
    last = last_complete_day(at)
    return event, guard_beliefs(beliefs, early), early, {d: n for d, n in news.items() if d <= last}


def _anticipates(schedule: Schedule, case: Case, at: datetime) -> bool:
    full = schedule(case[0], case[1], case[2], case[3])
    cut = _cut(case, at)
    before = [s.cutoff for s in full if s.cutoff < at]
    return [s.cutoff for s in schedule(cut[0], cut[1], cut[2], cut[3])] != before


def _cases(n: int = 150) -> list[tuple[Case, datetime]]:
    rng = random.Random(7)
    out = []
    for i in range(n):
        case = _case(rng, i)
        event, _, res, _ = case
        at = event.open_time + (res.resolved_at - event.open_time) * rng.uniform(0.2, 1.0)
        out.append((case, at))
    return out


class _WorldSteps:
    name = "world"

    def __call__(
        self,
        event: Event,
        beliefs: Sequence[DailyBelief],
        resolution: Resolution,
        news_counts: Mapping[date, int] | None = None,
    ) -> tuple[StepSpec, ...]:
        return default_steps(event, resolution)


NON_ANTICIPATING: dict[str, Schedule] = {
    "causal-dojo": CausalDojoSchedule(),
    "causal-dojo from the first price": CausalDojoSchedule(start_at_first_belief=True),
    "causal-dojo with news": CausalDojoSchedule(news_threshold=15),
    "causal-lookback": CausalLookbackSchedule(),
    "world default": _WorldSteps(),
}


@pytest.mark.parametrize("name", sorted(NON_ANTICIPATING))
def test_steps_before_any_instant_use_only_what_was_public_then(name: str) -> None:
    schedule = NON_ANTICIPATING[name]
    bad = [c[0].id for c, at in _cases() if _anticipates(schedule, c, at)]
    assert bad == []


@pytest.mark.parametrize(
    "schedule", [DojoSchedule(), LookbackSchedule(), HindcastSchedule()], ids=lambda s: s.name
)
def test_the_check_catches_schedules_fitted_to_the_resolution(schedule: Schedule) -> None:
    assert any(_anticipates(schedule, c, at) for c, at in _cases())


def test_dojo_steps_sit_before_the_move_they_chose() -> None:
    # One sharp move on 06-08, inside the bin 06-06..06-10: Dojo's step lands at its cutoff,
    # before anyone could see it; the causal version steps once the move is over (06-09).
    prices = [0.5] * 7 + [0.9] * 13
    d0 = date(2025, 6, 1)
    event = Event(
        id="m", title="q", kind="binary", labels=("Yes", "No"),
        open_time=datetime(2025, 6, 1, tzinfo=UTC), close_time=datetime(2025, 6, 22, tzinfo=UTC),
    )  # fmt: skip
    beliefs = [
        DailyBelief(event_id="m", day=d0 + timedelta(days=i), probs={"Yes": p, "No": 1 - p})
        for i, p in enumerate(prices)
    ]
    res = Resolution(event_id="m", label="Yes", resolved_at=event.close_time)
    move_day = date(2025, 6, 8)
    dojo = [s.cutoff.date() for s in DojoSchedule()(event, beliefs, res)]
    causal = [s.cutoff.date() for s in CausalDojoSchedule()(event, beliefs, res)]
    assert move_day in dojo
    assert move_day not in causal and move_day + timedelta(days=1) in causal


def test_causal_schedules_are_registered_and_built_with_import_options() -> None:
    assert {"causal-dojo", "causal-lookback"} <= set(schedules.names())
    assert make_schedule("causal-dojo", start_at_first_belief=True) == CausalDojoSchedule(
        start_at_first_belief=True
    )
    assert make_schedule("causal-lookback", corpus_end=date(2025, 1, 1)) == (
        CausalLookbackSchedule()
    )
