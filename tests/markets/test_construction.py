"""Filters, funnel, temporal split and forecast-date schedules."""

from __future__ import annotations

import math
from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from markets_factories import at, binary

from pastcast.markets import (
    DojoSchedule,
    FilterConfig,
    HindcastSchedule,
    LookbackSchedule,
    TemporalSplit,
    build_dataset,
)
from pastcast.markets._filters import nontriviality
from pastcast.markets._schedules import dojo_step_count
from pastcast.records import DailyBelief


def test_nontriviality_matches_the_formulas() -> None:
    h = binary("q", [0.2, 0.5, 0.4, 0.9], label="Yes")
    s = nontriviality(h, FilterConfig())
    assert s is not None
    assert math.isclose(s.a, sum(-math.log(p) for p in [0.2, 0.5, 0.4, 0.9]) / 4)
    assert math.isclose(s.v, 0.3 + 0.1 + 0.5)
    assert math.isclose(s.c, 0.7 / 0.9)
    no = nontriviality(binary("n", [0.2, 0.5], label="No"), FilterConfig())
    assert no is not None and math.isclose(no.c, -1.0)  # realised-outcome series 0.8 -> 0.5


def test_gaps_break_adjacency() -> None:
    h = binary("g", [0.2, 0.5, 0.4, 0.9])
    beliefs = tuple(b for b in h.beliefs if b.day != date(2025, 6, 2))
    s = nontriviality(type(h)(h.event, h.resolution, beliefs), FilterConfig())
    assert s is not None and math.isclose(s.v, 0.5)  # only 06-03 -> 06-04 is adjacent


def test_funnel_counts_each_filter() -> None:
    histories = [
        binary("ok", [0.3, 0.5, 0.4, 0.6, 0.7, 0.8, 0.7, 0.9, 0.8, 0.9], label="Yes"),
        binary("short", [0.3, 0.6], label="Yes", close="2025-06-04"),
        binary("certain", [0.999] * 10, label="Yes"),
        binary("flat", [0.5, 0.51, 0.5, 0.51, 0.5, 0.51, 0.5, 0.51, 0.5, 0.5], label="No"),
        binary("late", [0.5] * 10, label="Yes", resolved="2025-06-01T06:00:00"),
    ]
    ds, report = build_dataset(histories, name="t", schedule=DojoSchedule())
    removed = {s.stage: s.removed for s in report.funnel}
    assert removed == {
        "imported": 0,
        "pre-resolution beliefs": 1,
        "lifetime": 1,
        "faithful days": 0,
        "price history": 0,
        "nontrivial: not near-certain": 1,
        "nontrivial: not flat and directionless": 1,
        "forecast steps": 0,
        "question-text edits": 0,
    }
    assert "not available" in report.funnel[3].note
    assert [e.id for e in ds.events] == ["ok"] and ds.id.startswith("t:")


def test_temporal_split_excludes_crossing_events() -> None:
    split = TemporalSplit.parse("2025-06-01,2025-07-01,2025-08-01")
    prices = [0.3, 0.5, 0.4, 0.6, 0.7, 0.8, 0.7, 0.9, 0.8, 0.9]
    histories = [
        binary("train", prices, start="2025-06-01"),
        binary("cross", prices, start="2025-06-25"),
        binary("eval", prices, start="2025-07-02"),
        binary("before", prices, start="2025-05-01"),
    ]
    ds, report = build_dataset(histories, name="t", schedule=DojoSchedule(), split=split)
    assert dict(ds.splits) == {"train": "train", "eval": "eval"}
    stage = {s.stage: s for s in report.funnel}["temporal split"]
    assert stage.removed == 2


@settings(max_examples=200)
@given(st.integers(0, 500))
def test_dojo_step_count_is_clamped_sqrt(n: int) -> None:
    t = dojo_step_count(n)
    assert t <= n
    if n >= 3:
        assert 3 <= t <= 10
        assert t == min(10, max(3, math.floor(math.sqrt(n) + 0.5)))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=60),
    st.integers(0, 20),
)
def test_dojo_steps_respect_buffer_bins_and_resolution(prices: list[float], early: int) -> None:
    h = binary("q", prices, close=None)
    close = h.event.close_time
    res = h.resolution.model_copy(update={"resolved_at": close - timedelta(days=early)})
    sched = DojoSchedule()
    steps = sched(h.event, h.beliefs, res)
    days = sched.eligible_days(h.event, h.beliefs, res)
    assert len(steps) == dojo_step_count(len(days))
    end = min(close.date(), res.resolved_at.date())
    for s in steps:
        assert s.cutoff < res.resolved_at
        assert (end - s.cutoff.date()).days >= 2
    cutoffs = [s.cutoff for s in steps]
    assert cutoffs == sorted(set(cutoffs)) and [s.step_index for s in steps] == list(
        range(len(steps))
    )


def test_dojo_picks_the_biggest_move_in_each_bin() -> None:
    prices = [0.5] * 12
    prices[2], prices[9] = 0.9, 0.1  # moves on day 2 (and back on 3), day 9 (and back on 10)
    h = binary("q", prices, close="2025-06-15")  # 13 eligible days -> T = 4 bins
    steps = DojoSchedule()(h.event, h.beliefs, h.resolution)
    picked = [(s.cutoff.date() - date(2025, 6, 1)).days for s in steps]
    assert len(picked) == 4
    assert 2 in picked or 3 in picked
    assert 9 in picked or 10 in picked


def test_news_volume_steers_flat_markets() -> None:
    h = binary("q", [0.5] * 12, close="2025-06-15")
    news = {date(2025, 6, 1) + timedelta(days=i): (100 if i == 1 else 1) for i in range(14)}
    steps = DojoSchedule()(h.event, h.beliefs, h.resolution, news)
    assert steps[0].cutoff == at("2025-06-02")


def test_multi_option_movement_is_half_l1() -> None:
    from pastcast.markets import movement

    a = DailyBelief(event_id="m", day=date(2025, 1, 1), probs={"A": 0.5, "B": 0.5})
    b = DailyBelief(event_id="m", day=date(2025, 1, 2), probs={"A": 0.2, "B": 0.8})
    assert math.isclose(movement(a, b, "multi"), 0.3)
    assert movement(None, b, "multi") == 0.0


def test_hindcast_is_day_before_close_capped_at_corpus_end() -> None:
    h = binary("q", [0.4] * 20, close="2025-06-25")
    (step,) = HindcastSchedule()(h.event, h.beliefs, h.resolution)
    assert step.cutoff == at("2025-06-24")
    (capped,) = HindcastSchedule(corpus_end=date(2025, 6, 10))(h.event, h.beliefs, h.resolution)
    assert capped.cutoff == at("2025-06-10")
    early = h.resolution.model_copy(update={"resolved_at": at("2025-06-12T15:00:00")})
    (guarded,) = HindcastSchedule()(h.event, h.beliefs, early)
    assert guarded.cutoff == at("2025-06-11")


def test_lookback_fractions_of_the_open_to_resolution_span() -> None:
    h = binary("q", [0.4] * 20, start="2025-06-01", close="2025-07-01")
    steps = LookbackSchedule()(h.event, h.beliefs, h.resolution)
    assert [s.cutoff for s in steps] == [
        at("2025-06-08"),
        at("2025-06-16"),
        at("2025-06-23"),
        at("2025-06-30"),
    ]
    assert all(s.cutoff < h.resolution.resolved_at for s in steps)


def test_build_drops_post_resolution_beliefs() -> None:
    h = binary("q", [0.3, 0.5, 0.4, 0.6, 0.7, 0.8, 0.7, 0.9, 0.99, 1.0], close="2025-06-20")
    res = h.resolution.model_copy(update={"resolved_at": at("2025-06-09T10:00:00")})
    ds, _ = build_dataset([type(h)(h.event, res, h.beliefs)], name="t", schedule=DojoSchedule())
    assert max(b.day for b in ds.beliefs["q"]) == date(2025, 6, 8)
    assert all(s.cutoff < res.resolved_at for s in ds.steps)
