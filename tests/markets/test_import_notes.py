"""What the importers drop or assume is said, counted and named: never silent."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from release_factories import release_row, write_release
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.errors import FieldError
from pastcast.markets.sources import load_release, read_forecastbench

FIXTURES = Path(__file__).parent / "fixtures"
BEFORE_OPEN_NOTE = "forecast dates before the question opened, dropped"
AFTER_RESOLUTION_NOTE = "forecast dates at or after the resolution, dropped"


def _fb(tmp_path: Path) -> Path:
    root = tmp_path / "fb"
    shutil.copytree(FIXTURES / "fb", root)
    derived = root / "derived"
    (derived / "questions.fixture.jsonl").rename(derived / "markets_resolved.jsonl")
    (derived / "values.fixture.csv").rename(derived / "daily_values.csv")
    return root


def _edit(root: Path, change: Any) -> None:
    path = root / "derived" / "markets_resolved.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    recs = change(recs) or recs
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_naive_timestamps_are_counted_in_a_note(tmp_path: Path) -> None:
    root = _fb(tmp_path)

    def naive(recs: list[dict[str, Any]]) -> None:
        recs[0]["market_info_open_datetime"] = "2025-01-01T09:30:00"
        recs[0]["market_info_close_datetime"] = "2025-03-31T00:00:00"

    _edit(root, naive)
    result = read_forecastbench(root)
    assert result.skipped["timestamps without a UTC offset, read as UTC"] == 2


def test_a_question_resolved_both_ways_is_dropped_and_named(tmp_path: Path) -> None:
    root = _fb(tmp_path)
    _edit(root, lambda recs: [*recs, {**recs[0], "resolved_to": 0.0}])
    result = read_forecastbench(root)
    assert "polymarket:0xaaa" not in {h.event.id for h in result.histories}
    assert result.skipped["resolved both ways, dropped: polymarket:0xaaa"] == 1


def test_a_repeated_question_line_keeps_the_first_and_says_so(tmp_path: Path) -> None:
    root = _fb(tmp_path)
    _edit(root, lambda recs: [*recs, recs[0]])
    result = read_forecastbench(root)
    assert [h.event.id for h in result.histories].count("polymarket:0xaaa") == 1
    assert result.skipped["repeated question lines (the first kept)"] == 1


def test_a_market_resolved_both_ways_in_the_resolution_sets_is_dropped(tmp_path: Path) -> None:
    root = tmp_path / "up"
    shutil.copytree(FIXTURES / "fb_upstream", root)
    (path,) = sorted((root / "resolution_sets").glob("*.json"))
    data = json.loads(path.read_text())
    first = next(r for r in data["resolutions"] if r.get("id") == "0xaaa")
    flipped = {**first, "resolved_to": 1.0 - float(first["resolved_to"])}
    data["resolutions"].append(flipped)
    path.write_text(json.dumps(data))
    result = read_forecastbench(root)
    assert not result.histories
    assert result.skipped["resolved both ways, dropped: polymarket:0xaaa"] == 1


@pytest.mark.parametrize("title", ["\x00", "\x00\x00\x00", " \x00\t", "\x01\x02"])
def test_a_question_without_visible_text_is_refused_naming_file_line_field(
    tmp_path: Path, title: str
) -> None:
    root = _fb(tmp_path)
    _edit(root, lambda recs: [{**recs[0], "question": title}, *recs[1:]])
    with pytest.raises(FieldError, match=r"markets_resolved\.jsonl:1: field title: "):
        read_forecastbench(root)


def test_a_release_without_its_eval_file_is_refused(tmp_path: Path) -> None:
    write_release(tmp_path, [release_row("b")], [])
    (tmp_path / "questions" / "eval.parquet").unlink()
    with pytest.raises(FieldError, match=r"eval\.parquet: missing"):
        load_release(tmp_path)


def test_release_forecast_dates_before_the_opening_are_dropped_and_counted(
    tmp_path: Path,
) -> None:
    row = release_row(
        "b",
        start_date=date(2025, 7, 10),
        forecast_dates=[date(2025, 7, 1), date(2025, 7, 5), date(2025, 7, 20), date(2025, 8, 2)],
        crowd_probabilities=[[0.4, 0.6], [0.4, 0.6], [0.2, 0.8], [0.1, 0.9]],
    )
    write_release(tmp_path, [row], [])
    notes: Counter[str] = Counter()
    ds = load_release(tmp_path, notes=notes)
    assert [s.cutoff.date() for s in ds.steps_of("b")] == [date(2025, 7, 20)]
    assert notes == {BEFORE_OPEN_NOTE: 2, AFTER_RESOLUTION_NOTE: 1}
    result = CliRunner().invoke(app, ["data", "show", "b", "--dataset", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"note: {tmp_path}: {BEFORE_OPEN_NOTE}: 2" in result.stderr


def test_the_import_command_prints_its_notes(tmp_path: Path) -> None:
    root = _fb(tmp_path)
    _edit(root, lambda recs: [*recs, {**recs[0], "resolved_to": 0.0}])
    out = tmp_path / "ds"
    args = ["data", "import", "forecastbench", str(root), "--out", str(out), "--schedule", "dojo"]
    result = CliRunner().invoke(app, [*args, "--keep-late-closes"])
    assert result.exit_code == 0, result.output
    assert "note: resolved both ways, dropped: polymarket:0xaaa: 1" in result.stderr
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["provenance"]["import_notes"]["resolved both ways, dropped: polymarket:0xaaa"] == 1
