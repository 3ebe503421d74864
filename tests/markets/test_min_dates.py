"""Forecast-Dojo's rule at import: an evaluation event keeps at least ``min_dates`` forecast
dates (a funnel stage with its counts); training events keep theirs."""

from __future__ import annotations

from collections import Counter

from markets_factories import binary

from pastcast.markets import (
    DojoSchedule,
    FilterConfig,
    TemporalSplit,
    build_dataset,
    filter_config,
)

SPLIT = TemporalSplit.parse("2025-06-01,2025-07-01,2025-08-01")
PRICES = [0.3, 0.5, 0.4, 0.6, 0.7, 0.8, 0.7, 0.9, 0.8, 0.9]


def _histories() -> list:  # type: ignore[type-arg]
    return [
        binary("train", PRICES, start="2025-06-01"),
        binary("eval", PRICES, start="2025-07-02"),
        binary("eval-long", PRICES * 2, start="2025-07-02"),
    ]


def _dates(min_dates: int, split: TemporalSplit | None = SPLIT) -> tuple[Counter[str], dict]:  # type: ignore[type-arg]
    ds, report = build_dataset(
        _histories(),
        name="t",
        schedule=DojoSchedule(),
        split=split,
        filters=FilterConfig(min_dates=min_dates),
    )
    return Counter(s.event_id for s in ds.steps), {s.stage: s for s in report.funnel}


def test_the_default_keeps_every_event_and_adds_no_stage() -> None:
    counts, stages = _dates(0)
    assert set(counts) == {"train", "eval", "eval-long"}
    assert "forecast dates" not in stages


def test_evaluation_events_with_too_few_dates_are_removed_and_counted() -> None:
    counts, _ = _dates(0)
    assert counts["eval"] < counts["eval-long"]
    need = counts["eval"] + 1
    kept, stages = _dates(need)
    assert set(kept) == {"train", "eval-long"}  # training keeps its dates, however few
    assert kept["train"] == counts["train"] < need
    stage = stages["forecast dates"]
    assert (stage.removed, stage.remaining) == (1, 2)
    assert f">= {need} forecast dates" in stage.note and "evaluation" in stage.note
    assert any(e.startswith("eval:") for e in stage.examples)


def test_an_unsplit_import_counts_every_event_as_evaluation() -> None:
    counts, _ = _dates(0, split=None)
    kept, _ = _dates(counts["eval"] + 1, split=None)
    assert set(kept) == {"eval-long"}


def test_min_dates_is_a_market_filter_value() -> None:
    assert filter_config({"min-dates": "3"}, where="--filter").min_dates == 3
