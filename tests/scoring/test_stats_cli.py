"""`pastcast stats longitudinal|memory-cost|coverage` on run logs written in the test."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scoring_builders import make_step
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.records import EpisodeRecord, Notebook, ToolCall, Usage
from pastcast.runlog import AgentSpec, RunHeader, RunLogWriter, StepRecord
from pastcast.scoring import table_from_records
from pastcast.scoring.analyses import capture_gain, evidence_index, memory_cost, resource_rows

runner = CliRunner()
CUTOFFS = [datetime(2025, 1, d, tzinfo=UTC) for d in (1, 5, 10)]


def _notebook(n_new: int, t: int) -> Notebook:
    day = ("2024-12-31", "2025-01-02", "2025-01-07")[t]  # new at step t (t >= 1)
    ledger = [{"id": f"E{i}", "claim": "c", "date_observed": day} for i in range(n_new)]
    return Notebook.model_validate(
        {"assessment": {"probabilities": {"Yes": 0.5}}, "evidence_ledger": ledger}
    )


def _steps() -> list[StepRecord]:
    out = []
    for k, agent in enumerate(("a", "b", "c")):
        for e in ("e1", "e2"):
            for t in range(3):
                for setting in ("memory_on", "memory_free"):
                    p = 0.5 + 0.1 * t * (k + 1) / 3 + (0.05 if setting == "memory_on" else 0)
                    docs = tuple(f"{e}-d{i}" for i in range(2 * t * (k + 1)))
                    episode = EpisodeRecord(
                        notebook_out=_notebook(t * (k + 1), t) if setting == "memory_on" else None,
                        usage=Usage(
                            model_calls=1,
                            input_tokens=100 * (1 if setting == "memory_on" and t else 2),
                            cost_usd=0.01 * (t + 1),
                        ),
                        tool_calls=(
                            ToolCall(name="search", arguments={}, result=[], doc_ids=docs),
                        ),
                    )
                    out.append(
                        make_step(
                            {"Yes": p, "No": 1 - p},
                            agent=agent,
                            setting=setting,
                            event_id=e,
                            step_index=t,
                            cutoff=CUTOFFS[t],
                            run_id=setting,
                            episode=episode,
                        )
                    )
    return out


def _logs(tmp_path: Path, steps: list[StepRecord]) -> list[str]:
    paths = []
    for setting in ("memory_on", "memory_free"):
        path = tmp_path / f"{setting}.jsonl"
        header = RunHeader(
            run_id=setting,
            created_at=datetime(2025, 1, 1, tzinfo=UTC),
            dataset_id="d",
            config={},
            agents=tuple(AgentSpec(name=a, factory="f") for a in "abc"),
            code_version="test",
        )
        with RunLogWriter(path, header) as w:
            for s in steps:
                if s.setting == setting:
                    w.write(s)
        paths.append(str(path))
    return paths


def _json(*args: str) -> dict:
    res = runner.invoke(app, ["stats", *args, "--json", "--bootstrap", "100"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_longitudinal(tmp_path: Path) -> None:
    steps = _steps()
    out = _json("longitudinal", *_logs(tmp_path, steps))
    assert len(out["thirds"]) == len(out["step_changes"]) == len(out["episode_gain"]) == 6
    ev = out["evidence"]
    assert len(ev["cut_points"]) == 3 and len(ev["by_quartile"]) == 2 * 4  # per setting
    api = capture_gain(table_from_records(steps), evidence_index(steps))
    got = {m["agent"]: m for m in ev["capture"]["models"]}
    for m in api.models:
        assert got[m.agent]["kappa"] == pytest.approx(m.kappa)
        assert got[m.agent]["gain"] == pytest.approx(m.gain)
    assert ev["capture"]["spearman_rho"] == pytest.approx(api.spearman_rho)
    text = runner.invoke(
        app, ["stats", "longitudinal", *_logs(tmp_path, steps), "--bootstrap", "0"]
    )
    assert text.exit_code == 0 and "episode_gain:" in text.stdout
    bad = runner.invoke(app, ["stats", "longitudinal", *_logs(tmp_path, steps), "--metric", "x"])
    assert bad.exit_code == 2 and "--metric" in bad.stderr


def test_memory_cost(tmp_path: Path) -> None:
    steps = _steps()
    out = _json("memory-cost", *_logs(tmp_path, steps), "--pooled")
    got = {(r["phase"], r["resource"]): r for r in out["ratios"]}
    assert got["first", "input_tokens"]["ratio"]["mean"] == pytest.approx(1.0)
    assert got["later", "input_tokens"]["ratio"]["mean"] == pytest.approx(0.5)
    assert got["later", "input_tokens"]["change"]["mean"] == pytest.approx(-0.5)
    api = memory_cost(table_from_records(steps), by=(), bootstrap=100, usage=resource_rows(steps))
    assert [r["ratio"]["ci_low"] for r in out["ratios"]] == [
        None if math.isnan(r.ratio.ci_low) else pytest.approx(r.ratio.ci_low) for r in api
    ]  # NaN (output tokens are not logged) is written as null
    split = _json("memory-cost", *_logs(tmp_path, steps), "--by-evidence")
    assert {r["phase"] for r in split["ratios"]} >= {"later Q1", "later Q4"}
    assert {tuple(r["group"]) for r in split["ratios"]} == {("a",), ("b",), ("c",)}


def test_coverage(tmp_path: Path) -> None:
    out = _json("coverage", *_logs(tmp_path, _steps()), "--by", "setting", "--edges", "1,5")
    got = {tuple(g[k] for k in ("setting", "coverage")): g for g in out["groups"]}
    # documents per step: 2 t (k + 1) for t = 0..2, k = 0..2 -> 0 (x3), 2, 4, 4, 6, 8, 12
    assert got["memory_on", "0"]["n_recorded"] == 3 * 2
    assert got["memory_on", "1-4"]["n_recorded"] == 3 * 2
    assert got["memory_on", ">=5"]["n_recorded"] == 3 * 2
    bad = runner.invoke(app, ["stats", "coverage", *_logs(tmp_path, _steps()), "--edges", "5,1"])
    assert bad.exit_code == 2 and "--edges" in bad.stderr
