"""The simulation study (seed 137, 50 rounds of 7 markets) shows the paper's qualitative
patterns and is byte-identical from run to run."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pastcast.arena import ARCHETYPES, SimulationConfig, SimulationResult, power_table, simulate
from pastcast.cli import app


@pytest.fixture(scope="module")
def study() -> SimulationResult:
    return simulate(SimulationConfig(seed=137, rounds=50, markets=7))


def test_the_papers_patterns(study: SimulationResult) -> None:
    board = {r.agent: r for r in study.report.leaderboard}
    kinds = {a.name: a.kind for a in ARCHETYPES}
    rnd = board["random"]
    assert -0.17 < rnd.alpha < -0.11 and rnd.t is not None and rnd.t < -5
    assert rnd.brier == pytest.approx(1 / 3, abs=0.03)
    market = board["market-consensus"]
    assert market.alpha == 0.0 and market.role == "reference"
    assert all(res.scores["market-consensus"].alpha_bp == 0 for res in study.results)
    trackers = [board[n] for n, k in kinds.items() if k == "market_tracking"]
    anchored = [board[n] for n, k in kinds.items() if k == "q_anchored"]
    assert len(trackers) == 2 and all(t.alpha < 0 for t in trackers)
    assert min(a.alpha for a in anchored) > max(t.alpha for t in trackers)
    # Murphy: the random agent's signature is huge REL and no RES; trackers lose resolution
    murphy = {m.agent: m for m in study.report.murphy}
    assert murphy["random"].reliability > 5 * max(
        murphy[n].reliability for n in kinds if n != "random"
    )
    assert murphy["random"].resolution < 0.02
    assert all(murphy[t.agent].resolution_gain < 0 for t in trackers)
    assert 0.23 < murphy["market-consensus"].uncertainty <= 0.25
    # tables have the expected shape
    assert study.report.rounds == 50 and study.report.markets_scored == 350
    assert {c.category for c in study.report.categories} == {
        "crypto",
        "politics",
        "sports",
        "economics",
        "geopolitics",
        "entertainment",
    }
    assert sum(c.rounds for c in study.report.categories) == 50
    assert all(len(v) == 50 for v in study.report.cumulative_alpha.values())


def test_the_power_table_is_proposition_3() -> None:
    table = {(p.alpha, p.predictions, p.rounds) for p in power_table(7)}
    assert table == {
        (0.005, 5567, 796),
        (0.01, 1392, 199),
        (0.02, 348, 50),
        (0.03, 155, 23),
        (0.05, 56, 8),
        (0.1, 14, 2),
    }


def test_the_command_is_byte_identical_across_runs() -> None:
    runner = CliRunner()
    args = ["arena", "simulate", "--seed", "137", "--rounds", "50", "--markets", "7", "--json"]
    first, second = runner.invoke(app, args), runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert first.stdout_bytes == second.stdout_bytes
    data = json.loads(first.output)
    assert data["config"]["seed"] == 137 and len(data["leaderboard"]) == len(ARCHETYPES)
    assert {"murphy", "categories", "cumulative_alpha", "power"} <= set(data)
    other = runner.invoke(app, [*args[:3], "138", *args[4:]])
    assert other.stdout_bytes != first.stdout_bytes
