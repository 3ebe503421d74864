"""Faithful-day thresholds per event type: pastcast's defaults, files and options, checked."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from markets_factories import at, binary, day

from pastcast.markets import (
    DayThreshold,
    DojoSchedule,
    FilterConfig,
    MarketHistory,
    build_dataset,
    filter_config,
    parse_filter_assignments,
    read_filter_file,
)
from pastcast.markets._filters import DEFAULT_DAY_THRESHOLDS, day_threshold, faithfulness
from pastcast.markets._history import DayActivity
from pastcast.records import DailyBelief, Event, Resolution

PRICES = [0.2 + 0.03 * i for i in range(14)]


def _active(h: MarketHistory, trades: int, volume: float = 5.0) -> MarketHistory:
    act = {b.day: DayActivity(trades=trades, volume=volume) for b in h.beliefs}
    return MarketHistory(h.event, h.resolution, h.beliefs, act)


def _multi(eid: str, trades: int) -> MarketHistory:
    event = Event(
        id=eid,
        title=f"Who {eid}?",
        kind="multi",
        labels=("A", "B", "C"),
        open_time=at("2025-06-01"),
        close_time=at("2025-06-17"),
        source="polymarket",
    )
    res = Resolution(event_id=eid, label="B", resolved_at=at("2025-06-17"))
    beliefs = tuple(
        DailyBelief(
            event_id=eid,
            day=day("2025-06-01") + timedelta(days=i),
            probs={"A": 0.6 - p / 2, "B": p, "C": 0.4 - p / 2},
        )
        for i, p in enumerate(PRICES)
    )
    return _active(MarketHistory(event, res, beliefs), trades)


def _faithful_kept(histories: list[MarketHistory], cfg: FilterConfig) -> set[str]:
    ds, report = build_dataset(histories, name="t", schedule=DojoSchedule(), filters=cfg)
    stage = next(s for s in report.funnel if s.stage == "faithful days")
    assert "binary: trades > " in stage.note and "multi: trades > " in stage.note
    return {e.id for e in ds.events}


def test_the_defaults_are_per_type() -> None:
    cfg = FilterConfig()
    assert day_threshold(cfg, "binary") == (1, 0.0)
    assert day_threshold(cfg, "multi") == (0, 0.0)
    assert cfg.day_thresholds == DEFAULT_DAY_THRESHOLDS
    one_trade_a_day = [_active(binary("b", PRICES), trades=1), _multi("m", trades=1)]
    assert faithfulness(one_trade_a_day[0], cfg) == (0.0, 14)  # a binary day needs two
    assert faithfulness(one_trade_a_day[1], cfg) == (1.0, 0)  # a bundle's leg, one
    assert _faithful_kept(one_trade_a_day, cfg) == {"m"}


def test_rows_from_files_and_options_set_one_type(tmp_path: Path) -> None:
    (tmp_path / "f.toml").write_text(
        "[filters]\nmin_volume = 1\n[filters.multi]\nmin_trades = 2\nmin_volume = 10.5\n"
    )
    cfg = filter_config(read_filter_file(tmp_path / "f.toml"), where="f.toml")
    assert day_threshold(cfg, "multi") == (2, 10.5) and day_threshold(cfg, "binary") == (1, 1.0)
    cfg = filter_config(parse_filter_assignments(["binary.min-trades=0"]), where="x", base=cfg)
    assert day_threshold(cfg, "binary") == (0, 1.0)
    assert cfg.day_thresholds["multi"] == DayThreshold(trades=2, volume=10.5)  # kept
    histories = [_active(binary("b", PRICES), trades=1), _multi("m", trades=1)]
    assert _faithful_kept(histories, cfg) == {"b"}
    # a type's own row wins over the flat value; the flat value still sets the other fields
    flat = filter_config({"min_trades": 5}, where="x")
    assert day_threshold(flat, "binary") == (5, 0.0) and day_threshold(flat, "multi") == (0, 0.0)


def test_the_table_is_recorded_with_the_dataset(tmp_path: Path) -> None:
    from pastcast.markets import build_and_save

    cfg = filter_config({"multi.min_trades": 3}, where="x")
    build_and_save(
        [_active(binary("b", PRICES), trades=4), _multi("m", trades=4)],
        tmp_path / "ds",
        name="t",
        schedule=DojoSchedule(),
        filters=cfg,
    )
    meta = json.loads((tmp_path / "ds" / "metadata.json").read_text())
    assert meta["filters"]["day_thresholds"] == {"multi": {"trades": 3, "volume": None}}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"mult.min_trades": 1}, "x: unknown event type 'mult' \\(known: binary, multi\\)"),
        ({"multi.min_trade": 1}, "x: unknown filter 'multi.min_trade'"),
        ({"multi.min_trades": 1.5}, "x multi: field min_trades: expected an integer"),
        ({"binary.min_volume": -1}, "x binary: field min_volume: must be a finite number >= 0"),
        ({"multi": 3}, "x: field multi: expected a table"),
    ],
)
def test_bad_rows_name_the_type_and_field(values: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        filter_config(values, where="x")
