"""A replay of 20 rounds of real resolved Polymarket markets (ForecastBench) with the market
reference, the random baseline and the heuristic research agent over a real news corpus
(Wikipedia current events), scored per round on the ledger."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _real_data import import_polymarket, wcep_index
from arena_helpers import needs_evm
from pastcast.cli import app
from pastcast.cutoff import parse_timestamp
from pastcast.dataset import load_dataset
from pastcast.runlog import read_run_log
from pastcast_arena import verify_ledger
from pastcast_arena._replay import read_results

needs_evm()


@pytest.mark.shared_data
def test_twenty_rounds_of_real_markets(shared_data_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    data = import_polymarket(shared_data_dir, tmp_path / "fb")
    wcep_index(shared_data_dir, tmp_path / "index", date(2025, 5, 1), date(2026, 5, 31))
    out = tmp_path / "arena"
    r = runner.invoke(
        app,
        [
            "arena",
            "replay",
            "--dataset",
            str(data),
            "--corpus",
            str(tmp_path / "index"),
            "--agent",
            "market",
            "--agent",
            "random",
            "--agent",
            "heuristic:max_reads=2",
            "--rounds",
            "20",
            "--markets",
            "7",
            "--out",
            str(out),
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["rounds"] == 20 and report["unscored_rounds"] == 0
    assert report["failures"] == {"market": 0, "random": 0, "heuristic:max_reads=2": 0}
    results = read_results(out / "rounds.jsonl")
    ds = load_dataset(data)
    for res in results:
        assert res.round.k == 7 and len(res.scores) == 3
        assert res.scores["market"].alpha_bp == 0  # the market echoes its own benchmark
        for m in res.round.markets:
            assert ds.resolutions[m.market_id].resolved_at > res.round.reveal_deadline
        for s in res.scores.values():
            assert s.brier == s.brier_bp / 10_000 and s.alpha == s.alpha_bp / 10_000
    board = {row["agent"]: row for row in report["leaderboard"]}
    assert board["random"]["alpha"] < 0 < board["random"]["brier"]
    assert board["random"]["rounds"] == board["heuristic:max_reads=2"]["rounds"] == 20
    per_round = [row for row in report["per_round"] if row["agent"] == "heuristic:max_reads=2"]
    assert len(per_round) == 20
    # the heuristic really researched: it read documents, all dated before the deadline
    steps = read_run_log(out / "run.jsonl").steps
    reads = [
        (rec.cutoff, call)
        for rec in steps
        if rec.agent == "heuristic:max_reads=2"
        for call in rec.episode.tool_calls
        if call.name == "read" and call.ok
    ]
    assert len(reads) > 20
    assert all(
        parse_timestamp(str(json.loads(call.result)["date"]).replace(" ", "T")) < cutoff
        for cutoff, call in reads
    )
    assert not any(
        call.name == "market_history"
        for rec in steps
        for call in rec.episode.tool_calls
        if rec.agent != "market"
    )
    assert verify_ledger(out / "ledger.jsonl").snapshot.scores
