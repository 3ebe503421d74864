"""ForecastBench from the published files alone, and with daily series rebuilt from the nightly
history of a clone of the upstream repository (a small git repository built by the test)."""

from __future__ import annotations

import json
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest
from fb_git import FIRST_NIGHT, NIGHTS, RESOLVED_ON, build_clone, price
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.cutoff import last_complete_day
from pastcast.dataset import load_dataset
from pastcast.errors import FieldError
from pastcast.markets import build_dataset, make_schedule
from pastcast.markets.sources import HISTORY_REPO_HINT, read_forecastbench

runner = CliRunner()


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_clone(tmp_path_factory.mktemp("fb") / "forecastbench-datasets")


def test_a_clone_read_as_published_has_one_price_per_question(clone: Path) -> None:
    result = read_forecastbench(clone)  # question_sets/ and resolution_sets/ under datasets/
    by_id = {h.event.id: h for h in result.histories}
    assert set(by_id) == {"polymarket:0xabc", "manifold:m-2"}
    assert [len(h.beliefs) for h in by_id.values()] == [1, 1]
    assert result.skipped["not a market source"] == 1


def test_nightly_history_gives_daily_series(clone: Path) -> None:
    result = read_forecastbench(clone, history=clone)
    assert result.history["versions read"] == NIGHTS + 1
    h = {x.event.id: x for x in result.histories}["polymarket:0xabc"]
    series = {b.day: b.probs["Yes"] for b in h.beliefs}
    assert series[FIRST_NIGHT + timedelta(days=3)] == pytest.approx(price("0xabc", 3))
    assert len(series) == NIGHTS + 1  # and the freeze value, dated the day before the freeze
    assert h.resolution.resolved_at.date() == RESOLVED_ON
    assert all(d <= last_complete_day(h.resolution.resolved_at) for d in series)


def test_questions_get_a_category_from_their_text(clone: Path) -> None:
    result = read_forecastbench(clone)
    cats = {h.event.id: h.event.category for h in result.histories}
    assert cats == {"polymarket:0xabc": "Sports", "manifold:m-2": "Crypto"}


def test_an_unreadable_nightly_version_is_counted_not_fatal(tmp_path: Path) -> None:
    repo = build_clone(tmp_path / "c", broken_night=4)
    result = read_forecastbench(repo, history=repo)
    assert result.history["unreadable versions"] == 1
    h = {x.event.id: x for x in result.histories}["manifold:m-2"]
    assert FIRST_NIGHT + timedelta(days=4) not in {b.day for b in h.beliefs}


def test_a_folder_that_is_not_a_clone_is_one_error(tmp_path: Path, clone: Path) -> None:
    with pytest.raises(FieldError, match=r"--history-repo .*not a readable git clone"):
        read_forecastbench(clone, history=tmp_path)


def _import(args: list[str]) -> tuple[int, str, dict]:  # type: ignore[type-arg]
    res = runner.invoke(app, ["data", "import", "forecastbench", *args, "--json"])
    return res.exit_code, res.output, (json.loads(res.stdout) if res.exit_code == 0 else {})


def test_published_files_alone_stop_at_the_history_stage_with_a_hint(clone: Path) -> None:
    result = read_forecastbench(clone)
    _, report = build_dataset(
        result.histories,
        name="fb",
        schedule=make_schedule("dojo", start_at_first_belief=True),
        hints={"price history": HISTORY_REPO_HINT},
    )
    stages = {s.stage: s for s in report.funnel}
    assert stages["price history"].removed == 2 and stages["price history"].remaining == 0
    assert "--history-repo" in stages["price history"].hint
    assert stages["nontrivial: not flat and directionless"].removed == 0


def test_cli_published_files_alone_name_the_stage_and_what_keeps_events(
    clone: Path, tmp_path: Path
) -> None:
    res = runner.invoke(
        app, ["data", "import", "forecastbench", str(clone), "--out", str(tmp_path / "d")]
    )
    assert res.exit_code == 2  # an empty dataset is never written
    assert res.stderr.count("\n") == 1
    # one price per set: the history stage cannot measure them and keeps them; the clone's
    # markets resolved early, so the last stage to remove them is the late-close one
    assert "price history" in res.stdout and "not measurable" in res.stdout
    assert "stage 'closes before collection'" in res.stderr and "--keep-late-closes" in res.stderr
    assert not (tmp_path / "d").exists()


def test_cli_with_the_nightly_history_yields_events_with_steps(clone: Path, tmp_path: Path) -> None:
    out = tmp_path / "d"
    # the clone's markets resolved early, before the history ends: keep them
    args = [str(clone), "--history-repo", str(clone), "--out", str(out), "--keep-late-closes"]
    code, text, summary = _import(args)
    assert code == 0, text
    assert summary["events"] == 2 and summary["steps"] > 0
    stages = {s["stage"]: s for s in summary["funnel"]}
    assert stages["price history"]["removed"] == 0 and not stages["price history"]["hint"]
    ds = load_dataset(out)
    for s in ds.steps:
        assert s.cutoff < ds.resolutions[s.event_id].resolved_at
    assert {e.category for e in ds.events} == {"Sports", "Crypto"}
    info = json.loads(runner.invoke(app, ["data", "info", str(out), "--json"]).stdout)
    assert info["provenance"]["history"]["versions read"] == NIGHTS + 1
    assert info["by_category"] == {"Crypto": 1, "Sports": 1}


def test_cli_bad_history_repo_is_one_line(clone: Path, tmp_path: Path) -> None:
    res = runner.invoke(
        app,
        [
            "data",
            "import",
            "forecastbench",
            str(clone),
            "--history-repo",
            str(tmp_path / "missing"),
            "--out",
            str(tmp_path / "d"),
        ],
    )
    assert res.exit_code == 2
    assert res.output.startswith("error: --history-repo") and res.output.count("\n") == 1
    assert not (tmp_path / "d").exists()


def test_each_question_set_adds_its_freeze_value(tmp_path: Path) -> None:
    root = tmp_path / "fb"
    shutil.copytree(Path(__file__).parent / "fixtures" / "fb_upstream", root)
    first = root / "question_sets" / "2025-01-05-llm.json"
    later = json.loads(first.read_text())
    for q in later["questions"]:
        q["freeze_datetime"], q["freeze_datetime_value"] = "2025-01-10T00:00:00+00:00", "0.42"
    (root / "question_sets" / "2025-01-19-llm.json").write_text(json.dumps(later))
    (h,) = read_forecastbench(root).histories
    assert [(b.day, b.probs["Yes"]) for b in h.beliefs] == [
        (date(2024, 12, 25), 0.31),
        (date(2025, 1, 9), 0.42),
    ]
