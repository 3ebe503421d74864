"""`pastcast compare` on two real runs of the embedded world, `pastcast score --paired` and the
report's paired table: every figure recomputed here from the logs' own forecasts."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from scoring_builders import make_step
from typer.testing import CliRunner

from pastcast.app import compare_runs, score_runs
from pastcast.cli._app import app
from pastcast.errors import FieldError
from pastcast.reports import Runs, compare_selections, paired_table, scorecard
from pastcast.reports.html._write import report_tables
from pastcast.runlog import RunLogWriter, header_path, read_run_log
from pastcast.scoring import metric_list, paired_comparison, table_from_records

runner = CliRunner()


@pytest.fixture(scope="module")
def world_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The base-rate baseline and the heuristic research agent on world:0's first 3 events
    (12 steps), written by `pastcast run` (one index built for both)."""
    out = tmp_path_factory.mktemp("world")
    logs = []
    for agent in ("base-rate", "heuristic"):
        log = out / f"{agent}.jsonl"
        ran = runner.invoke(
            app,
            ["run", "--dataset", "world:0", "--agent", agent, "--max-events", "3"]
            + ["--out", str(log)],
        )
        assert ran.exit_code == 0, ran.output
        logs.append(log)
    return logs[0], logs[1]


def test_compare_two_world_runs_matches_the_logs(world_runs: tuple[Path, Path]) -> None:
    base, tuned = world_runs
    made = compare_runs(base, tuned, bootstrap=500)
    c = made.comparison
    assert (c.base_name, c.other_name) == ("base-rate@memory_free", "heuristic@memory_free")
    steps_b, steps_t = read_run_log(base).steps, read_run_log(tuned).steps
    assert c.overall.n_matched == len(steps_b) == len(steps_t) == 12
    assert c.overall.only_a == c.overall.only_b == 0
    rows = {r.label: r for r in c.rows}
    # each side's value is its own scorecard's (every step is paired here)
    for log, side in ((base, "base"), (tuned, "other")):
        card = score_runs([log], bootstrap=0).card
        m = card.groups[0].summary.metrics
        for label, metric in (("Brier", "brier"), ("Log loss", "log_loss")):
            assert getattr(rows[label], side) == pytest.approx(m[metric].mean)
        assert getattr(rows["Accuracy"], side) == pytest.approx(m["accuracy"].mean)
        calls = card.groups[0].resources["tool_calls"]
        assert getattr(rows["Tool calls / forecast"], side) == pytest.approx(calls)
    for r in c.rows:
        if r.n:
            assert r.delta.mean == pytest.approx(r.other - r.base, abs=1e-12)
    kinds = {s.event_id: s.grading.labels == ("Yes", "No") for s in steps_b}
    n_binary = sum(kinds[s.event_id] for s in steps_b)
    assert rows["Brier (binary)"].n == n_binary
    assert rows["Brier (multi-choice)"].n == 12 - n_binary
    assert rows["Tool calls / forecast"].base == 0.0  # the baseline does no research
    assert rows["Parser acceptance"].other == 1.0
    d = rows["Brier"].delta
    assert d.ci_low <= d.mean <= d.ci_high


def test_compare_cli_prints_json_markdown_and_a_table(world_runs: tuple[Path, Path]) -> None:
    base, tuned = world_runs
    got = runner.invoke(app, ["compare", str(base), str(tuned), "--json", "--bootstrap", "200"])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert doc["n_matched"] == 12 and doc["difference"] == "other - base"
    assert [r["label"] for r in doc["rows"]][:3] == [
        "Brier",
        "Brier (binary)",
        "Brier (multi-choice)",
    ]
    md = runner.invoke(app, ["compare", str(base), str(tuned), "--markdown", "--bootstrap", "50"])
    assert md.exit_code == 0 and "| Brier | 12 |" in md.stdout
    text = runner.invoke(app, ["compare", str(base), str(tuned), "--bootstrap", "50"])
    assert text.exit_code == 0 and "Parser acceptance" in text.stdout


def _copy_with(log: Path, out: Path, **header: object) -> Path:
    """A copy of ``log`` whose header fields are replaced (a new run id in its steps too)."""
    out.mkdir()
    shutil.copy(log, out / "run.jsonl")
    if "run_id" in header:
        lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        for line in lines:
            line["run_id"] = header["run_id"]
        (out / "run.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    head = json.loads(header_path(log).read_text())
    head.update(header)
    header_path(out / "run.jsonl").write_text(json.dumps(head))
    return out / "run.jsonl"


def test_compare_refuses_other_datasets_and_logs_without_shared_steps(
    world_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    base, tuned = world_runs
    other = _copy_with(tuned, tmp_path / "other", dataset_id="world-v2:seed=1")
    with pytest.raises(FieldError) as err:
        compare_runs(base, other, bootstrap=0)
    assert err.value.field == "tuned" and "same dataset" in err.value.reason
    got = runner.invoke(app, ["compare", str(base), str(other)])
    assert got.exit_code == 2 and "TUNED" in got.output and "world-v2:seed=1" in got.output

    head = read_run_log(base).header.model_copy(update={"run_id": "elsewhere"})
    lonely = tmp_path / "lonely" / "run.jsonl"
    with RunLogWriter(lonely, head) as writer:
        writer.write(make_step({"Yes": 0.5}, agent="base-rate", event_id="nowhere"))
    with pytest.raises(FieldError) as err:
        compare_runs(lonely, tuned, bootstrap=0)
    assert err.value.field == "tuned" and "shares no step" in err.value.reason

    with pytest.raises(FieldError) as err:
        compare_runs(base, base)
    assert err.value.field == "tuned" and "same run" in err.value.reason
    with pytest.raises(FieldError) as err:
        compare_runs(base, tuned, tuned_agent="nobody")
    assert err.value.field == "tuned_agent"


def test_compare_two_agents_of_one_log_names_the_log_once(recorded_log: Path) -> None:
    agents = ["--base-agent", "heuristic@no_tools", "--tuned-agent", "heuristic@memory_free"]
    more = [*agents, "--json", "--bootstrap", "50"]
    once = runner.invoke(app, ["compare", str(recorded_log), *more])
    assert once.exit_code == 0, once.output
    twice = runner.invoke(app, ["compare", str(recorded_log), str(recorded_log), *more])
    assert twice.exit_code == 0, twice.output
    assert json.loads(once.stdout) == json.loads(twice.stdout)
    made = compare_runs(
        recorded_log, base_agent="heuristic@no_tools", tuned_agent="heuristic@memory_free"
    )
    assert made.comparison.overall.n_matched == json.loads(once.stdout)["n_matched"] > 0
    alone = runner.invoke(app, ["compare", str(recorded_log), "--base-agent", "heuristic@no_tools"])
    assert alone.exit_code == 2 and alone.stderr.startswith("error: --tuned-agent"), alone.output


def test_score_paired_json_is_the_paired_comparison(recorded_log: Path) -> None:
    got = runner.invoke(
        app,
        ["score", str(recorded_log), "--json", "--bootstrap", "300"]
        + ["--paired", "heuristic@memory_free:heuristic@no_tools"],
    )
    assert got.exit_code == 0, got.output
    (pair,) = json.loads(got.stdout)["paired"]
    table = table_from_records(read_run_log(recorded_log).steps)
    direct = paired_comparison(
        table,
        {"agent": "heuristic", "setting": "no_tools"},
        {"agent": "heuristic", "setting": "memory_free"},
        bootstrap=300,
    )
    assert pair["n_matched"] == direct.n_matched > 0
    for metric in ("brier", "log_loss", "accuracy"):
        assert pair["metrics"][metric]["mean"] == pytest.approx(direct[metric].mean)
        assert pair["metrics"][metric]["ci_low"] == pytest.approx(direct[metric].ci_low)
    # and by hand: the mean of per-step differences
    steps = read_run_log(recorded_log).steps
    brier = table.metrics()["brier"]
    by = {(s.agent, s.setting, s.event_id, s.step_index, s.rollout): i for i, s in enumerate(steps)}
    diffs = [
        brier[by[("heuristic", "no_tools", *k[2:])]] - brier[i]
        for k, i in by.items()
        if k[:2] == ("heuristic", "memory_free")
    ]
    assert pair["metrics"]["brier"]["mean"] == pytest.approx(float(np.mean(diffs)))


def test_score_paired_names_the_option_on_a_bad_pair(recorded_log: Path) -> None:
    got = runner.invoke(app, ["score", str(recorded_log), "--paired", "heuristic:market"])
    assert got.exit_code == 2 and "--paired" in got.output and "several records" in got.output
    got = runner.invoke(app, ["score", str(recorded_log), "--paired", "nobody:else"])
    assert got.exit_code == 2 and "expected BASE:OTHER" in got.output


def test_the_report_pairs_settings_of_one_agent(recorded_log: Path) -> None:
    runs = Runs.from_logs([read_run_log(recorded_log)])
    card = scorecard(runs, bootstrap=100)
    tables = report_tables(card, runs)
    paired = tables[-1]
    assert paired.title == "Paired differences on shared steps"
    pairs = {(r[0], r[1]) for r in paired.rows}
    assert ("heuristic@memory_on", "heuristic@memory_free") in pairs
    assert ("heuristic@no_tools", "heuristic@memory_free") in pairs
    assert all(not math.isnan(float(r[7])) for r in paired.rows)


def test_two_runs_of_one_agent_pair_across_runs(recorded_log: Path, tmp_path: Path) -> None:
    copy = _copy_with(recorded_log, tmp_path / "again", run_id="second-run")
    runs = Runs.from_logs((read_run_log(recorded_log), read_run_log(copy)))
    tables = report_tables(scorecard(runs, bootstrap=0), runs)
    rows = tables[-1].rows
    assert any("(run second-run)" in r[0] for r in rows)


def test_an_agent_of_the_other_log_is_not_found_in_this_one(world_runs: tuple[Path, Path]) -> None:
    base, tuned = world_runs  # base-rate only in base, heuristic only in tuned
    with pytest.raises(FieldError) as err:
        compare_runs(base, tuned, tuned_agent="base-rate", bootstrap=0)
    assert err.value.field == "tuned_agent" and "no such agent" in err.value.reason
    assert "heuristic@memory_free" in err.value.reason  # what the log does hold
    with pytest.raises(FieldError) as err:
        compare_runs(base, tuned, base_agent="heuristic@memory_free", bootstrap=0)
    assert err.value.field == "base_agent"


def test_comparisons_list_the_paired_metrics_in_the_registry_order(recorded_log: Path) -> None:
    """Every table of paired differences lists the registry's paired metrics in its order
    (Brier, accuracy, log loss), each with its interval: one order for every table of
    pastcast. (Table 4's own order, Brier, log loss, accuracy, and the paired table's log loss
    without its interval were a hand list of their own, retired with it.)"""
    paired = [m for m in metric_list() if m.paired]
    assert [m.name for m in paired] == ["brier", "accuracy", "log_loss"]
    runs = Runs.from_logs([read_run_log(recorded_log)])
    base, other = ({"agent": "heuristic", "setting": s} for s in ("memory_free", "no_tools"))
    c = compare_selections(runs, base, other, bootstrap=50)
    assert [r.label for r in c.rows] == [
        "Brier",
        "Brier (binary)",
        "Brier (multi-choice)",
        "Accuracy",
        "Log loss",
        "Tool calls / forecast",
        "Parser acceptance",
    ]
    pairs = [
        paired_comparison(
            table_from_records(read_run_log(recorded_log).steps),
            {"agent": "heuristic", "setting": "no_tools"},
            {"agent": "heuristic", "setting": "memory_free"},
            bootstrap=50,
        )
    ]
    assert list(pairs[0].differences) == [m.name for m in paired]
    table = paired_table(pairs)
    assert table.columns[5:] == (
        "Brier a",
        "Brier b",
        "Δ Brier",
        "95% CI",
        "Δ accuracy (pts)",
        "95% CI (pts)",
        "Δ log loss",
        "95% CI",
    )
    (row,) = table.rows
    ll = pairs[0]["log_loss"]
    assert row[11:] == (f"{ll.mean:+.3f}", f"[{ll.ci_low:+.3f}, {ll.ci_high:+.3f}]")
