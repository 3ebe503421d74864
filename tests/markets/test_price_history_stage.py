"""Too little price history is its own funnel stage, with a hint, not "flat and directionless"."""

from __future__ import annotations

from datetime import timedelta

from markets_factories import binary

from pastcast.markets import DojoSchedule, FilterConfig, MarketHistory, build_dataset


def _spaced(eid: str, prices: list[float], gap_days: int) -> MarketHistory:
    """A market priced every ``gap_days`` days only (no two priced days in a row)."""
    h = binary(eid, prices, close="2025-07-01")
    beliefs = tuple(
        b.model_copy(update={"day": h.beliefs[0].day + timedelta(days=i * gap_days)})
        for i, b in enumerate(h.beliefs)
    )
    return MarketHistory(h.event, h.resolution, beliefs)


def test_markets_without_consecutive_prices_fail_the_history_stage() -> None:
    histories = [
        binary("ok", [0.3, 0.5, 0.4, 0.6, 0.7, 0.8, 0.7, 0.9, 0.8, 0.9], close="2025-06-20"),
        binary("one", [0.4], close="2025-06-20"),  # a single price (the freeze value)
        _spaced("spaced", [0.2, 0.8, 0.3], gap_days=14),  # moves a lot, but never day to day
    ]
    ds, report = build_dataset(histories, name="t", schedule=DojoSchedule())
    stages = {s.stage: s for s in report.funnel}
    history = stages["price history"]
    assert history.removed == 2 and history.remaining == 1
    assert "2" in history.note and "consecutive" in history.note
    assert history.hint  # says what to import to get daily series
    assert stages["nontrivial: not flat and directionless"].removed == 0
    assert [e.id for e in ds.events] == ["ok"]


def test_history_stage_follows_the_configured_minimum() -> None:
    h = binary("ok", [0.3, 0.5, 0.4, 0.6, 0.7, 0.8, 0.7, 0.9, 0.8, 0.9], close="2025-06-20")
    _, report = build_dataset(
        [h], name="t", schedule=DojoSchedule(), filters=FilterConfig(min_history_days=11)
    )
    stage = next(s for s in report.funnel if s.stage == "price history")
    assert stage.removed == 1 and ">= 11" in stage.note


def test_a_hint_is_given_only_where_a_stage_removed_something() -> None:
    h = binary("ok", [0.3, 0.5, 0.4, 0.6, 0.7, 0.8, 0.7, 0.9, 0.8, 0.9], close="2025-06-20")
    _, report = build_dataset([h], name="t", schedule=DojoSchedule())
    assert all(not s.hint for s in report.funnel)
    _, custom = build_dataset(
        [binary("one", [0.4], close="2025-06-20")],
        name="t",
        schedule=DojoSchedule(),
        hints={"price history": "import the nightly history"},
    )
    stage = next(s for s in custom.funnel if s.stage == "price history")
    assert stage.hint == "import the nightly history"
