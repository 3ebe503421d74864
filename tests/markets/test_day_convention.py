"""The day-inclusive cutoff convention (Forecast-Dojo), selectable for every built-in schedule and
from the command line; start-of-day stays the default."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from markets_factories import at, binary
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.cutoff import DayConvention
from pastcast.dataset import load_dataset
from pastcast.markets import Schedule, make_schedule, schedules
from pastcast.records import Resolution

H = binary("q", [0.3, 0.5, 0.4, 0.6, 0.7, 0.8, 0.7, 0.9, 0.8, 0.9] * 2, close="2025-06-25")


def _both(name: str, resolution: Resolution = H.resolution) -> tuple[list[datetime], ...]:
    plain = make_schedule(name)(H.event, H.beliefs, resolution)
    inclusive = make_schedule(name, convention=DayConvention.INCLUSIVE)(
        H.event, H.beliefs, resolution
    )
    assert all(s.cutoff < resolution.resolved_at for s in (*plain, *inclusive))
    return [s.cutoff for s in plain], [s.cutoff for s in inclusive]


def test_inclusive_dojo_cutoffs_are_the_ends_of_the_chosen_days() -> None:
    plain, inclusive = _both("dojo")
    assert plain and all(c.hour == 0 for c in plain)
    assert inclusive == [c + timedelta(days=1) for c in plain]


def test_inclusive_lookback_and_hindcast_stop_before_the_resolution() -> None:
    plain, inclusive = _both("lookback")
    assert inclusive[:3] == [c + timedelta(days=1) for c in plain[:3]]
    # the 100% point: the day before a midnight resolution is entirely visible either way
    assert inclusive[3] == plain[3] == at("2025-06-24")
    assert _both("hindcast") == ([at("2025-06-24")], [at("2025-06-24")])
    early = H.resolution.model_copy(update={"resolved_at": at("2025-06-12T15:00:00")})
    assert _both("hindcast", early) == ([at("2025-06-11")], [at("2025-06-12")])


def test_a_schedule_without_a_convention_refuses_one() -> None:
    def fixed() -> Schedule:  # a plugin schedule that knows no convention
        return make_schedule("hindcast")

    schedules.add("fixed-test-schedule", fixed)
    try:
        with pytest.raises(
            ValueError, match="schedule 'fixed-test-schedule' takes no day convention"
        ):
            make_schedule("fixed-test-schedule", convention=DayConvention.INCLUSIVE)
        make_schedule("fixed-test-schedule")  # the default is fine
    finally:
        schedules.remove("fixed-test-schedule")


def test_cli_import_with_the_inclusive_convention(tmp_path: Path) -> None:
    src = Path(__file__).parent / "fixtures" / "fb_upstream"
    runner = CliRunner()
    out = tmp_path / "d"
    res = runner.invoke(
        app,
        [
            "data",
            "import",
            "forecastbench",
            str(src),
            "--out",
            str(out),
            "--schedule",
            "lookback",
            "--filter",
            "min_history_days=1",
            "--filter",
            "min_variation=0",
            "--day-convention",
            "inclusive",
            "--keep-late-closes",  # the fixture's markets resolved early, before collection
        ],
    )
    assert res.exit_code == 0, res.output
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["schedule_config"]["convention"] == "inclusive"
    first = min(s.cutoff for s in load_dataset(out).steps)
    assert first == at("2025-01-24")  # 25% of the span falls on 01-23, seen in full
    bad = runner.invoke(
        app,
        ["data", "import", "forecastbench", str(src), "--out", str(tmp_path / "x")]
        + ["--day-convention", "end"],
    )
    assert bad.exit_code == 2 and not (tmp_path / "x").exists()
