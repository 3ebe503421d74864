"""The Forecast-Dojo release layout used directly by `run --dataset` (under either day
convention), `data show EVENT`, and question titles next to event ids in `score` and reports."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from markets_factories import at
from release_factories import release_row as _row
from release_factories import write_release as _write
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.runlog import read_run_log

runner = CliRunner()


@pytest.fixture
def release(tmp_path: Path) -> Path:
    multi = _row(
        "m",
        title="Who will win the 2026 NBA Finals?",
        options=["A", "B", "C"],
        belief_kind="multi_neg_risk",
        resolved_label="C",
        start_date=date(2026, 3, 2),
        close_date=date(2026, 4, 1),
        forecast_dates=[date(2026, 3, 10)],
        crowd_probabilities=[[0.5, None, 0.5]],
    )
    return _write(tmp_path / "release", [_row("b", title="Will Bitcoin hit $200k?")], [multi])


def test_run_plays_a_release_directly(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = runner.invoke(app, ["run", "-a", "uniform", "--dataset", str(release), "--out", str(out)])
    assert res.exit_code == 0, res.output
    log = read_run_log(out)
    assert log.header.dataset_id.startswith("forecast-dojo:")
    cutoffs = sorted((s.event_id, s.cutoff) for s in log.steps)
    assert cutoffs == [("b", at("2025-07-05")), ("b", at("2025-07-20")), ("m", at("2026-03-10"))]
    assert {s.split for s in log.steps} == {"train", "eval"}
    assert {s.category for s in log.steps} == {"Crypto", "Sports"}


def test_run_with_the_paper_day_inclusive_convention(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = runner.invoke(
        app,
        ["run", "-a", "uniform", "--dataset", str(release), "--out", str(out)]
        + ["--day-convention", "inclusive"],
    )
    assert res.exit_code == 0, res.output
    log = read_run_log(out)
    assert min(s.cutoff for s in log.steps if s.event_id == "b") == at("2025-07-06")
    plain = read_run_log(out).header.dataset_id
    assert plain.startswith("forecast-dojo:")


@pytest.mark.parametrize("dataset", ["world", "DATASET_DIR"])
def test_the_convention_is_refused_where_cutoffs_are_fixed(dataset: str, tmp_path: Path) -> None:
    if dataset == "DATASET_DIR":
        src = Path(__file__).parent / "fixtures" / "fb_upstream"
        imported = runner.invoke(
            app,
            ["data", "import", "forecastbench", str(src), "--out", str(tmp_path / "ds")]
            + ["--filter", "min_history_days=1", "--filter", "min_variation=0"]
            + ["--keep-late-closes"],  # the fixture's markets resolved early
        )
        assert imported.exit_code == 0, imported.output
        dataset = str(tmp_path / "ds")
    res = runner.invoke(
        app,
        ["run", "-a", "uniform", "--dataset", dataset, "--out", str(tmp_path / "r.jsonl")]
        + ["--day-convention", "inclusive"],
    )
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: --day-convention inclusive")
    assert res.stderr.count("\n") == 1
    assert not (tmp_path / "r.jsonl").exists()


def test_data_show_prints_one_question_without_its_outcome(release: Path) -> None:
    res = runner.invoke(app, ["data", "show", "m", "--dataset", str(release)])
    assert res.exit_code == 0, res.output
    assert "Who will win the 2026 NBA Finals?" in res.stdout
    assert "A | B | C" in res.stdout and "Sports" in res.stdout and "eval" in res.stdout
    assert "2026-03-10" in res.stdout and "outcome" not in res.stdout
    shown = runner.invoke(app, ["data", "show", "m", "--dataset", str(release), "--outcome"])
    assert "outcome: C" in shown.stdout
    js = json.loads(
        runner.invoke(app, ["data", "show", "b", "--dataset", str(release), "--json"]).stdout
    )
    assert js["event"]["title"] == "Will Bitcoin hit $200k?" and "resolution" not in js
    assert js["split"] == "train" and js["beliefs"]["days"] == 2
    inclusive = runner.invoke(
        app,
        ["data", "show", "b", "--dataset", str(release), "--json", "--day-convention", "inclusive"],
    )
    assert json.loads(inclusive.stdout)["steps"][0].startswith("2025-07-06")


def test_data_show_finds_a_unique_prefix_and_names_what_is_missing() -> None:
    res = runner.invoke(app, ["data", "show", "nope", "--json"])
    assert res.exit_code == 2
    assert res.stderr.startswith("error: EVENT 'nope': no such event in world")
    assert res.stderr.count("\n") == 1
    world = json.loads(runner.invoke(app, ["data", "show", "world-05", "--json"]).stdout)
    assert world["event"]["id"] == "world-050"
    many = runner.invoke(app, ["data", "show", "world-00"])
    assert many.exit_code == 2 and "the prefix of 9 events" in many.stderr


def test_score_and_report_put_questions_next_to_event_ids(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    assert (
        runner.invoke(
            app, ["run", "-a", "uniform", "--dataset", str(release), "--out", str(out)]
        ).exit_code
        == 0
    )
    args = ["score", str(out), "--by", "agent,event", "--bootstrap", "10"]
    scored = runner.invoke(app, [*args, "--dataset", str(release), "--json"])
    assert scored.exit_code == 0, scored.output
    card = json.loads(scored.stdout)
    assert card["titles"] == {
        "b": "Will Bitcoin hit $200k?",
        "m": "Who will win the 2026 NBA Finals?",
    }
    table = runner.invoke(app, [*args, "--dataset", str(release)])
    assert "question" in table.stdout and "Will Bitcoin hit $200k?" in table.stdout
    bare = runner.invoke(app, args)
    assert "Will Bitcoin" not in bare.stdout and "pass --dataset" in bare.stderr
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    rep = runner.invoke(
        app,
        ["report", str(out), "--by", "agent,event", "--bootstrap", "10", "--dataset", str(release)]
        + ["--out", str(tmp_path / "rep")],
    )
    assert rep.exit_code == 0, rep.output
    md = (tmp_path / "rep" / "tables.md").read_text()
    assert "| question |" in md.replace("| agent | event | question |", "| question |")
    assert "Who will win the 2026 NBA Finals?" in md
