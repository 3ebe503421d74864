"""`pastcast score` on a recorded run: every metric per group, grouping by kind, category and
horizon, failures against the schedule, resources per forecast."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.reports import Runs
from pastcast.runlog import read_run_log
from pastcast.scoring import summarize
from pastcast.scoring.analyses import calibration

runner = CliRunner()


def _json(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory, dataset) -> Path:  # type: ignore[no-untyped-def]
    from pastcast.dataset import save_dataset

    out = tmp_path_factory.mktemp("ds") / "report-dataset"
    save_dataset(dataset, out)
    return out


def test_score_reports_every_metric_per_group(recorded_log: Path) -> None:
    got = _json("score", str(recorded_log), "--bootstrap", "200")
    groups = {(g["agent"], g["setting"]): g for g in got["groups"]}
    details = {(d["agent"], d["setting"]): d for d in got["details"]}
    assert set(groups) == set(details)
    g, d = groups[("scripted", "memory_on")], details[("scripted", "memory_on")]
    for name in ("brier", "binary_brier", "accuracy", "hindcast_accuracy", "distance_to_market"):
        assert g["metrics"][name]["n"] > 0
    # the scripted model costs $0.002 a call and makes three calls and two tool calls a step
    r = d["resources_per_forecast"]
    assert r["cost_usd"] == pytest.approx(0.006)
    assert (r["model_calls"], r["tool_calls"], r["input_tokens"]) == (3.0, 2.0, 3000.0)
    assert d["models"] == ["reports-test:m"]
    # calibration, Murphy and the anatomy of alpha are the API's numbers
    runs = Runs.from_logs([read_run_log(recorded_log)])
    (cal,) = [
        c
        for c in calibration(runs.table(), ("agent", "setting"), bootstrap=200)
        if c.group == ("scripted", "memory_on")
    ]
    assert d["calibration"]["ece"] == pytest.approx(cal.ece)
    assert d["calibration"]["murphy"]["resolution"] == pytest.approx(cal.murphy.resolution)  # type: ignore[union-attr]
    assert d["calibration"]["alpha_anatomy"]["alpha"] == pytest.approx(cal.anatomy.alpha)  # type: ignore[union-attr]
    # references on the same forecasts: uniform over 2 or 3 labels, and the market's belief
    assert 0.5 < d["references"]["uniform_brier"] < 2 / 3
    assert d["references"]["n_market"] == g["n_recorded"]
    # every group was scheduled 8 events x 4 steps x 2 rollouts and recorded them all
    assert (g["n_scheduled"], g["n_missing"], g["scheduled_failure_rate"]) == (64, 0, 0.0)


def test_failure_rate_counts_missing_forecasts_against_the_schedule(
    recorded_log: Path, tmp_path: Path
) -> None:
    log = tmp_path / "run.jsonl"
    shutil.copy(recorded_log.with_suffix(".header.json"), tmp_path / "run.header.json")
    lines = recorded_log.read_text().splitlines(keepends=True)
    dropped = [
        ln for ln in lines if '"agent":"scripted","role":"agent","setting":"memory_free"' in ln
    ]
    keep = [ln for ln in lines if ln not in dropped[:10]]
    log.write_text("".join(keep))
    got = _json("score", str(log), "--bootstrap", "0")
    (g,) = [x for x in got["groups"] if (x["agent"], x["setting"]) == ("scripted", "memory_free")]
    assert (g["n_scheduled"], g["n_recorded"], g["n_missing"]) == (64, 54, 10)
    assert g["scheduled_failure_rate"] == pytest.approx(10 / 64)
    assert g["failure_rate"] == 0.0


@pytest.mark.parametrize(
    ("by", "expected"),
    [
        ("kind", {("binary",), ("multi",)}),
        ("model", {("-",), ("reports-test:m",)}),
        ("category", {("science",), ("politics",), ("sports",), ("technology",), ("economics",)}),
    ],
)
def test_score_by_kind_and_category(recorded_log: Path, by: str, expected: set) -> None:
    got = _json("score", str(recorded_log), "--by", by, "--bootstrap", "0")
    assert {tuple(g[c] for c in by.split(",")) for g in got["groups"]} == expected
    api = summarize(Runs.from_logs([read_run_log(recorded_log)]).table(), by=(by,), bootstrap=0)
    for s, g in zip(api, got["groups"], strict=True):
        assert g["metrics"]["brier"]["mean"] == pytest.approx(s.metrics["brier"].mean)


def test_score_by_horizon_needs_the_dataset(recorded_log: Path, dataset_dir: Path) -> None:
    res = runner.invoke(app, ["score", str(recorded_log), "--by", "horizon"])
    assert res.exit_code == 2 and "--dataset is needed to group by horizon" in res.stderr
    got = _json(
        "score", str(recorded_log), "--by", "agent,horizon", "--dataset", str(dataset_dir),
        "--bootstrap", "0",
    )  # fmt: skip
    horizons = {g["horizon"] for g in got["groups"]}
    # cutoffs at days 4, 11, 18, 26; resolutions at days 30-37: 4 to 33 days ahead
    assert horizons == {"<7d", "7-30d", "30-90d"}
    for g in got["groups"]:
        assert g["n_scheduled"] == g["n_recorded"]
    total = sum(g["n_recorded"] for g in got["groups"] if g["agent"] == "uniform")
    assert total == 64


def test_score_refuses_another_dataset(recorded_log: Path) -> None:
    res = runner.invoke(app, ["score", str(recorded_log), "--dataset", "world:0"])
    assert res.exit_code == 2
    assert "is dataset 'world-v2:seed=0', but" in res.stderr and "report-test-v1" in res.stderr


def test_score_terminal_tables(recorded_log: Path) -> None:
    res = runner.invoke(app, ["score", str(recorded_log), "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    for title in (
        "Calibration of two-outcome forecasts",
        "Cost and failures",
        "market (reference)",
    ):
        assert title in res.stdout
    assert "reports-test:m" in res.stdout


def test_scorecard_json_has_no_nan(recorded_log: Path) -> None:
    got = _json("score", str(recorded_log), "--bootstrap", "0")
    text = json.dumps(got)
    assert "NaN" not in text
    rollout_sd = got["groups"][0]["metrics"]["brier"]["rollout_std"]
    assert rollout_sd is None or math.isfinite(rollout_sd)
