"""A metric added by a plugin (one registration through the ``pastcast.metrics`` entry point)
is scored, tabled and compared like the built-in ones: it is in ``pastcast score --json``, in
the report's main table and in ``pastcast compare``, with no change to pastcast."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _plugins import install_plugin
from pastcast.cli._app import app
from pastcast.runlog import header_path, read_run_log
from pastcast.scoring import metric_list, metrics, normalize

runner = CliRunner()

PLUGIN = '''
from pastcast.scoring import Metric


def _step(forecast):
    return 1.0 - forecast.probs.get(forecast.truth, 0.0)


def _rows(columns):
    return 1.0 - columns.p_truth


def absolute_error():
    """One minus the probability the forecast gave the outcome."""
    return Metric(
        name="absolute_error",
        label="abs. error",
        better="lower",
        scale=(0.0, 1.0),
        step=_step,
        rows=_rows,
        paired=True,
    )
'''


@pytest.fixture
def plugin_metric(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    target = "tests_pastcast_metric.metric"
    install_plugin(
        tmp_path / "plugin",
        monkeypatch,
        dist="pastcast-test-metric",
        modules={target: PLUGIN},
        entry_points={"pastcast.metrics": {"absolute_error": f"{target}:absolute_error"}},
    )
    metrics.reload_plugins()
    yield
    monkeypatch.undo()
    metrics.reload_plugins()


def _copy_as_run(log: Path, out: Path, run_id: str) -> Path:
    """``log`` again under another run id (what ``pastcast compare`` needs: two runs)."""
    out.mkdir()
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    for line in lines:
        line["run_id"] = run_id
    (out / "run.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    head = json.loads(header_path(log).read_text())
    head["run_id"] = run_id
    header_path(out / "run.jsonl").write_text(json.dumps(head))
    return out / "run.jsonl"


def _mean_error(log: Path, agent: str, setting: str) -> float:
    """The plugin's score of one group, by hand from the log's forecasts (uniform fallback)."""
    errors = []
    for s in read_run_log(log).steps:
        if (s.agent, s.setting) != (agent, setting):
            continue
        p = normalize(s.forecast.probs) if s.forecast.usable else None
        labels = set(s.grading.labels) | {s.grading.truth}
        truth_p = 1.0 / len(labels) if p is None else p.get(s.grading.truth, 0.0)
        errors.append(1.0 - truth_p)
    return sum(errors) / len(errors)


def test_a_plugin_metric_is_scored_reported_and_compared(
    plugin_metric: None, recorded_log: Path, tmp_path: Path
) -> None:
    assert "absolute_error" in [m.name for m in metric_list()]
    scored = runner.invoke(app, ["score", str(recorded_log), "--json", "--bootstrap", "50"])
    assert scored.exit_code == 0, scored.output
    groups = {(g["agent"], g["setting"]): g for g in json.loads(scored.stdout)["groups"]}
    got = groups[("heuristic", "memory_free")]["metrics"]["absolute_error"]
    assert got["mean"] == pytest.approx(_mean_error(recorded_log, "heuristic", "memory_free"))
    assert got["ci_low"] <= got["mean"] <= got["ci_high"]

    out = tmp_path / "report"
    args = ["report", str(recorded_log), "--out", str(out), "--bootstrap", "0"]
    reported = runner.invoke(app, [*args, "--figure", "reliability"])
    assert reported.exit_code == 0, reported.output
    main = (out / "tables.md").read_text().split("### ")[1]
    assert main.startswith("Main table")
    header = main.splitlines()[2]
    assert "| abs. error |" in header and header.index("info-alpha") < header.index("abs. error")
    assert "abs. error" in reported.stdout

    again = _copy_as_run(recorded_log, tmp_path / "again", "second-run")
    pick = ["--base-agent", "heuristic@memory_free", "--tuned-agent", "heuristic@no_tools"]
    compare = ["compare", str(recorded_log), str(again), *pick, "--bootstrap", "50"]
    compared = runner.invoke(app, [*compare, "--json"])
    assert compared.exit_code == 0, compared.output
    rows = {r["metric"]: r for r in json.loads(compared.stdout)["rows"]}
    row = rows["absolute_error"]
    assert row["label"] == "Abs. error" and row["n"] == 64
    assert row["base"] == pytest.approx(_mean_error(recorded_log, "heuristic", "memory_free"))
    assert row["other"] == pytest.approx(_mean_error(recorded_log, "heuristic", "no_tools"))
    text = runner.invoke(app, compare)
    assert text.exit_code == 0 and "Abs. error" in text.stdout


def test_without_the_plugin_no_such_metric(recorded_log: Path) -> None:
    scored = runner.invoke(app, ["score", str(recorded_log), "--json", "--bootstrap", "0"])
    assert scored.exit_code == 0, scored.output
    assert "absolute_error" not in json.loads(scored.stdout)["groups"][0]["metrics"]
