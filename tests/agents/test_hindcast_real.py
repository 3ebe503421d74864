"""A Hindcast-preset run on real ForecastBench questions (Polymarket, t0 the day before close)
over the real Wikipedia current-events corpus, with the offline lexical model: the agent's own
evidence tally is in every step of the log, and ``score`` and ``stats coverage`` give accuracy
by its S/W/N label (Hindcast Tables 1 and 6)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _real_data import import_polymarket, wcep_index
from pastcast.cli import app
from pastcast.runlog import read_run_log

MODEL = "lexical:demo"


@pytest.mark.shared_data
def test_a_hindcast_run_on_real_markets_scores_by_the_agents_label(
    shared_data_dir: Path, tmp_path: Path
) -> None:
    cli = CliRunner()
    data = import_polymarket(
        shared_data_dir, tmp_path / "fb", "--schedule", "hindcast", "--corpus-end", "2026-03-28"
    )
    wcep_index(shared_data_dir, tmp_path / "index", date(2025, 10, 1), date(2026, 3, 28))
    log = tmp_path / "runs" / "hindcast.jsonl"
    ran = cli.invoke(
        app,
        [
            "run",
            "--preset",
            "hindcast",
            "--dataset",
            str(data),
            "--corpus",
            str(tmp_path / "index"),
            "--retrieval",
            "bm25",  # the paper's dense search needs a Qwen3-Embedding-0.6B server
            "--agent",
            f"two-stage:model={MODEL}",
            "--agent",
            f"zero-shot:model={MODEL}",
            "--max-events",
            "10",
            "--rollouts",
            "2",
            "--out",
            str(log),
        ],
    )
    assert ran.exit_code == 0, ran.output
    run = read_run_log(log)
    assert run.header.plan is not None and run.header.plan["preset"] == "hindcast"
    agent = f"two-stage:model={MODEL}"
    mine = [s for s in run.steps if s.agent == agent]
    assert len(mine) == 20 and {s.rollout for s in mine} == {0, 1}
    assert all(s.episode.evidence_tally is not None for s in mine)
    assert all(s.episode.stop_reason is not None for s in mine)
    searches = [c for s in mine for c in s.episode.tool_calls if c.name == "search"]
    assert searches and all(c.arguments["doc_type"] == "submission" for c in searches)
    labels = {s.episode.evidence_tally.quality for s in mine if s.episode.evidence_tally}
    assert labels <= {"strong", "weak", "none"} and len(labels) >= 2
    scored = cli.invoke(app, ["score", str(log), "--by", "agent,evidence", "--json"])
    assert scored.exit_code == 0, scored.output
    groups = {(g["agent"], g["evidence"]): g for g in json.loads(scored.stdout)["groups"]}
    assert sum(g["n_recorded"] for (a, _), g in groups.items() if a == agent) == 20
    assert groups[(f"zero-shot:model={MODEL}", "untallied")]["n_recorded"] == 20
    bins = cli.invoke(
        app, ["stats", "coverage", str(log), "--bins", "label", "--by", "agent", "--json"]
    )
    assert bins.exit_code == 0, bins.output
    sizes = {g["evidence"]: g["n_recorded"] for g in json.loads(bins.stdout)["groups"]}
    assert sizes == {
        label: sum(1 for s in mine if s.episode.evidence_tally.quality == label)  # type: ignore[union-attr]
        for label in labels
    } | {"untallied": 20}
