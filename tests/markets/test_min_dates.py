"""Forecast-Dojo's rule at import: an evaluation event keeps at least ``min_dates`` forecast
dates (a funnel stage with its counts); training events keep theirs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from markets_factories import binary
from typer.testing import CliRunner

from pastcast.app import ForecastBenchImport, import_forecastbench, with_preset
from pastcast.cli import app
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


def _import(tmp_path: Path, name: str, *extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    src = Path(__file__).parent / "fixtures" / "fb_upstream"
    res = CliRunner().invoke(
        app,
        ["data", "import", "forecastbench", str(src), "--out", str(tmp_path / name)]
        + ["--filter", "min_history_days=1", "--filter", "min_variation=0"]
        + ["--keep-late-closes", "--json", *extra],
    )
    return res.exit_code, json.loads(res.stdout) if res.exit_code == 0 else {"out": res.output}


def _stage(out: dict, name: str) -> dict | None:  # type: ignore[type-arg]
    return next((s for s in out["funnel"] if s["stage"] == name), None)


def test_the_import_option_and_the_dojo_preset_apply_the_rule(tmp_path: Path) -> None:
    code, plain = _import(tmp_path, "plain")
    assert code == 0, plain
    assert _stage(plain, "forecast dates") is None
    code, many = _import(tmp_path, "many", "--min-dates", "1000")
    # every event is removed by the rule: the funnel's stage is named, nothing is written
    assert code == 2 and "'forecast dates'" in many["out"] and ">= 1000" in many["out"]
    assert not (tmp_path / "many").exists()
    code, dojo = _import(tmp_path, "dojo", "--preset", "dojo")
    assert code == 0, dojo
    stage = _stage(dojo, "forecast dates")
    assert stage is not None and ">= 3 forecast dates" in stage["note"]
    assert stage["remaining"] == dojo["events"]
    # an option given on the command line is set over the preset
    code, over = _import(tmp_path, "over", "--preset", "dojo", "--min-dates", "0")
    assert code == 0, over
    assert _stage(over, "forecast dates") is None and over["events"] == plain["events"]
    code, bad = _import(tmp_path, "bad", "--preset", "nope")
    assert code == 2 and "--preset" in bad["out"]


def test_the_hindcast_preset_gives_its_schedule_unless_one_is_given(tmp_path: Path) -> None:
    code, hc = _import(tmp_path, "hc", "--preset", "hindcast")
    assert code == 0, hc
    assert json.loads((tmp_path / "hc" / "metadata.json").read_text())["schedule"] == "hindcast"
    assert _stage(hc, "forecast dates") is None  # hindcast sets no date rule
    code, own = _import(tmp_path, "own", "--preset", "hindcast", "--schedule", "lookback")
    assert code == 0, own
    assert json.loads((tmp_path / "own" / "metadata.json").read_text())["schedule"] == "lookback"


def test_the_command_line_and_python_record_the_same_import(tmp_path: Path) -> None:
    """The record the options build under a preset is the one Python builds and merges."""
    code, cli = _import(tmp_path, "cli", "--preset", "dojo", "--schedule", "lookback")
    assert code == 0, cli
    mine = ForecastBenchImport(
        path_or_url=Path(__file__).parent / "fixtures" / "fb_upstream",
        out=tmp_path / "py",
        schedule="lookback",
        filters={"min_history_days": "1", "min_variation": "0"},
        keep_late_closes=True,
    )
    import_forecastbench(with_preset(mine, "dojo"))
    recorded = [
        json.loads((tmp_path / name / "metadata.json").read_text())["provenance"]["plan"]
        for name in ("cli", "py")
    ]
    assert recorded[0] == {**recorded[1], "out": str(tmp_path / "cli")}
    assert recorded[0]["preset"] == "dojo" and recorded[0]["filters"]["min_dates"] == 3
