"""`pastcast score` re-scores run logs exactly as the API does; `pastcast stats power`."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scoring_builders import make_step
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.reports import Runs
from pastcast.runlog import AgentSpec, RunHeader, RunLogWriter, StepRecord, read_step_columns
from pastcast.scoring import summarize

runner = CliRunner()


def _steps() -> list[StepRecord]:
    out = []
    for e in range(5):
        truth = "Yes" if e % 2 else "No"
        mkt = {"Yes": 0.3 + 0.1 * e, "No": 0.7 - 0.1 * e}
        for r in range(2):
            p = 0.2 + 0.15 * e + 0.05 * r
            for setting in ("memory_free", "memory_on"):
                usable = not (e == 3 and r == 1 and setting == "memory_on")
                out.append(
                    make_step(
                        {"Yes": p, "No": 1 - p},
                        truth=truth,
                        market=mkt,
                        usable=usable,
                        agent="m",
                        setting=setting,
                        event_id=f"e{e}",
                        rollout=r,
                    )
                )
        out.append(
            make_step(
                mkt, truth=truth, market=mkt, agent="market", role="reference", event_id=f"e{e}"
            )
        )
    return out


def _write(path: Path, steps: list[StepRecord]) -> list[Path]:
    """One log per setting: a log's record key (agent, event, step, rollout) has no setting."""
    paths = []
    for setting in sorted({s.setting for s in steps}):
        p = path.with_name(f"{path.stem}-{setting}.jsonl")
        _write_one(p, [s for s in steps if s.setting == setting])
        paths.append(p)
    return paths


def _write_one(path: Path, steps: list[StepRecord]) -> Path:
    header = RunHeader(
        run_id="run",
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        dataset_id="d",
        config={},
        agents=(AgentSpec(name="m", factory="f"),),
        code_version="test",
    )
    with RunLogWriter(path, header) as w:
        for s in steps:
            w.write(s)
    return path


def _cli_json(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return b is None
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("fallback", ["uniform", "exclude", "worst"])
def test_cli_rescore_matches_api(tmp_path: Path, fallback: str) -> None:
    steps = _steps()
    logs = [str(p) for p in _write(tmp_path / "run.jsonl", steps)]
    # the CLI also counts each group's scheduled forecasts (from the run headers and steps)
    sched = Runs(tuple(read_step_columns(p) for p in logs)).scheduled(("agent", "setting"))
    api = summarize(
        steps,
        by=("agent", "setting"),
        fallback=fallback,  # type: ignore[arg-type]
        bootstrap=500,
        scheduled=sched,
    )
    got = _cli_json("score", *logs, "--fallback", fallback, "--bootstrap", "500")
    assert len(got["groups"]) == 3
    for s, g in zip(api, got["groups"], strict=True):
        assert _same(s.as_dict(), g), (s.as_dict(), g)
    # stored scores in the log are deliberately wrong: the numbers come from re-scoring
    assert got["groups"][0]["metrics"]["brier"]["mean"] < 2


def test_cli_table_lists_references_separately(tmp_path: Path) -> None:
    logs = [str(p) for p in _write(tmp_path / "run.jsonl", _steps())]
    res = runner.invoke(app, ["score", *logs, "--bootstrap", "50"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "market (reference)" in out
    assert out.index("memory_free") < out.index("market (reference)")


def test_cli_score_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "step"}\n')
    res = runner.invoke(app, ["score", str(bad)])
    assert res.exit_code == 2
    assert "bad.jsonl:1" in res.stderr and "header" in res.stderr
    log = _write(tmp_path / "run.jsonl", _steps())[0]
    # an unknown column ("model" is a known one: the agents' models in the run header)
    res = runner.invoke(app, ["score", str(log), "--by", "provider"])
    assert res.exit_code == 2 and "unknown column 'provider'" in res.stderr


@pytest.mark.parametrize(("alpha", "n", "rounds"), [(0.005, 5567, 796), (0.02, 348, 50)])
def test_stats_power_cli(alpha: float, n: int, rounds: int) -> None:
    got = _cli_json(
        "stats", "power", "--alpha", str(alpha), "--z-alpha", "1.645", "--z-power", "0.842"
    )
    assert (got["n"], got["rounds"]) == (n, rounds)
    res = runner.invoke(app, ["stats", "power", "--alpha", "0"])
    assert res.exit_code == 2 and "alpha must be positive" in res.stderr
