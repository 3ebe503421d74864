"""Replays: rounds from a dataset's resolved markets, forecast through the normal episode
machinery at each commit deadline, committed, revealed and scored on the ledger or the EVM."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena_helpers import needs_evm, synthetic_dataset
from pastcast.agents import agent_spec, register_agent
from pastcast.cli import app
from pastcast.env import Episode, ToolError
from pastcast.records import Forecast
from pastcast.runlog import read_run_log
from pastcast_arena import LedgerArena, RoundPlan, replay, verify_ledger
from pastcast_arena._replay import ReplayResult, read_results

needs_evm()

START = datetime(2025, 1, 20, 16, 0, tzinfo=UTC)
PLAN = RoundPlan(markets=4, rounds=5, start=START, interval_days=4)


class PeekingAgent:
    """Says 0.9 if any market price is reachable from its episode, 0.1 otherwise."""

    def forecast(self, episode: Episode) -> Forecast:
        try:
            seen = bool(episode.tools.market_history())
        except ToolError:
            seen = False
        p = 0.9 if seen else 0.1
        return Forecast(probs={"Yes": p, "No": 1 - p}, raw_text=episode.question.cutoff.isoformat())


@register_agent("test-arena-peek")
def _peek() -> PeekingAgent:
    """Test agent: reports whether it can see market prices."""
    return PeekingAgent()


AGENTS = (agent_spec("market"), agent_spec("random"), agent_spec("test-arena-peek"))


@pytest.fixture(scope="module")
def ledger_replay(tmp_path_factory: pytest.TempPathFactory) -> tuple[ReplayResult, Path]:
    out = tmp_path_factory.mktemp("replay")
    arena = LedgerArena.create(out / "ledger.jsonl", clock=lambda: 1_750_000_000)
    resolve_by = datetime(2025, 2, 20, tzinfo=UTC)  # later resolutions count as unresolved
    ds = synthetic_dataset()
    return replay(ds, None, AGENTS, out, arena, plan=PLAN, resolve_by=resolve_by), out  # type: ignore[arg-type]


def test_every_round_is_scored_and_the_market_echo_scores_zero(
    ledger_replay: tuple[ReplayResult, Path],
) -> None:
    result, out = ledger_replay
    assert len(result.results) == 5
    scored = [r for r in result.results if r.scores]
    # the last round's markets all resolve after the cutoff: it stays open, unscored
    assert len(scored) == 4 and result.report.unscored_rounds == 1
    assert result.results[-1].outcomes == (2, 2, 2, 2)
    for res in scored:
        assert set(res.scores) == {"market", "random", "test-arena-peek"}
        assert res.scores["market"].alpha_bp == 0
        assert res.predictions["market"] == res.round.benchmark_bp()
        assert res.roles == {"market": "reference"}
    assert result.failures == {"market": 0, "random": 0, "test-arena-peek": 0}
    board = {r.agent: r for r in result.report.leaderboard}
    assert board["market"].alpha == 0.0 and board["random"].alpha < 0
    assert read_results(out / "rounds.jsonl") == result.results


def test_agents_see_no_price_and_forecast_at_the_commit_deadline(
    ledger_replay: tuple[ReplayResult, Path],
) -> None:
    result, _ = ledger_replay
    for res in result.results:
        assert set(res.predictions["test-arena-peek"]) == {1000}  # never saw a market price
    deadlines = {r.commit_deadline for r in result.rounds}
    ds = synthetic_dataset()
    steps = read_run_log(result.run_log).steps
    assert len(steps) == 3 * sum(r.k for r in result.rounds)
    for rec in steps:
        assert rec.cutoff in deadlines
        assert rec.cutoff < ds.resolutions[rec.event_id].resolved_at  # type: ignore[attr-defined]
        if rec.agent == "test-arena-peek":
            assert rec.forecast.raw_text == rec.cutoff.isoformat()


def test_markets_resolved_after_the_cutoff_are_left_out(
    ledger_replay: tuple[ReplayResult, Path],
) -> None:
    result, _ = ledger_replay
    ds = synthetic_dataset()
    late = 0
    for res in result.results:
        for m, o in zip(res.round.markets, res.outcomes, strict=True):
            resolved_at = ds.resolutions[m.market_id].resolved_at  # type: ignore[attr-defined]
            if resolved_at > datetime(2025, 2, 20, tzinfo=UTC):
                assert o == 2
                late += 1
            else:
                label = ds.resolutions[m.market_id].label  # type: ignore[attr-defined]
                assert o == (1 if label == "Yes" else 0)
        if res.scores:
            assert res.scores["random"].resolved == sum(o != 2 for o in res.outcomes)
    assert late > 4


def test_the_ledger_of_a_replay_verifies_and_holds_the_same_scores(
    ledger_replay: tuple[ReplayResult, Path],
) -> None:
    result, out = ledger_replay
    summary = verify_ledger(out / "ledger.jsonl")
    catalogue = {r.round.round_id: r.round for r in result.results}
    roles = {"market": "reference"}
    assert summary.snapshot.results(catalogue, roles) == tuple(
        r for r in result.results if r.scores
    )


def test_the_evm_gives_the_ledgers_scores(
    ledger_replay: tuple[ReplayResult, Path], tmp_path: Path, evm: Any
) -> None:
    result, _ = ledger_replay
    plan = PLAN.model_copy(update={"rounds": 2})
    ds = synthetic_dataset()
    on_chain = replay(
        ds, None, AGENTS, tmp_path, evm, plan=plan, resolve_by=datetime(2025, 2, 20, tzinfo=UTC)
    )  # type: ignore[arg-type]
    for a, b in zip(on_chain.results, result.results[:2], strict=True):
        assert a.round.markets == b.round.markets and a.outcomes == b.outcomes
        assert a.predictions == b.predictions
        assert {n: s.model_dump(exclude={"round_id"}) for n, s in a.scores.items()} == {
            n: s.model_dump(exclude={"round_id"}) for n, s in b.scores.items()
        }


def test_the_replay_and_report_commands(tmp_path: Path) -> None:
    from pastcast.dataset import save_dataset

    data = tmp_path / "ds"
    save_dataset(synthetic_dataset(), data)  # type: ignore[arg-type]
    out = tmp_path / "out"
    runner = CliRunner()
    args = [
        "arena",
        "replay",
        "--dataset",
        str(data),
        "--agent",
        "market",
        "--agent",
        "random",
        "--out",
        str(out),
        "--rounds",
        "3",
        "--markets",
        "3",
        "--start",
        "2025-01-21",
        "--selector",
        "random:seed=2",
        "--json",
    ]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    data_out = json.loads(r.output)
    assert data_out["rounds"] == 3 and data_out["backend"] == "ledger"
    assert {row["agent"] for row in data_out["leaderboard"]} == {"market", "random"}
    assert (out / "ledger.jsonl").is_file() and (out / "run.jsonl").is_file()
    for rounds in (out / "rounds.jsonl", out):  # the file, or the replay's folder
        rep = runner.invoke(app, ["arena", "report", str(rounds), "--json"])
        assert rep.exit_code == 0, rep.output
        assert json.loads(rep.output)["leaderboard"] == data_out["leaderboard"]
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "already exists" in again.output
    for bad, msg in (
        (["--backend", "chain"], "--backend: Input should be 'ledger', 'evm' or 'anvil'"),
        (["--selector", "random:seeds=2"], "seeds"),
        (["--selector", "best"], "unknown round_selector 'best'"),
        (["--dataset", str(tmp_path / "none")], "not a dataset directory"),
        (["--start", "yesterday"], "not an ISO 8601"),
    ):
        res = runner.invoke(app, [*args[:-1], "--out", str(tmp_path / "x"), *bad])
        assert res.exit_code == 2 and msg in res.output, (bad, res.output)
        assert res.output.strip().count("\n") == 0


def test_the_report_and_the_dashboard_show_the_rounds(
    ledger_replay: tuple[ReplayResult, Path], tmp_path: Path
) -> None:
    from fastapi.testclient import TestClient

    from pastcast.app import dashboard, report_runs
    from pastcast.errors import FieldError

    _, out = ledger_replay
    rounds = read_results(out / "rounds.jsonl")
    made = report_runs([out / "run.jsonl"], tmp_path / "report")  # rounds found beside the log
    html = made.written.html.read_text()
    md = made.written.markdown.read_text()
    assert 'id="section-arena"' in html and "Arena leaderboard" in md
    for r in rounds:
        # the rounds table counts each round's commits and reveals in the verified ledger
        assert f"| {r.round.selector or '-'} | {len(AGENTS)} | {len(AGENTS)} |" in md
        for m, b in zip(r.round.markets, r.round.benchmarks, strict=True):
            # every market with its benchmark price and the price's source
            assert f"| {r.round.round_id} | {m.market_id} |" in md
            assert f"| {b.price_bp / 10_000:.4f} | {b.source} |" in md
    commits = sum(
        1
        for line in (out / "ledger.jsonl").open()
        if json.loads(line)["record"]["kind"] == "commit"
    )
    assert commits == len(rounds) * len(AGENTS)
    assert f"| {len(rounds[0].round.markets)} |" in md and "SE (Prop. 2)" in md
    assert {"arena-murphy.png", "arena-cumulative-alpha.png"} <= {
        p.name for p in made.written.figures
    }
    board = dashboard([out])
    client = TestClient(board.app)
    assert '/section/arena"' in client.get("/").text
    page = client.get("/section/arena").text
    assert "Arena leaderboard" in page and "data:image/png;base64," in page
    assert client.get("/section/none").status_code == 404
    # a tampered ledger is not reported as if it verified
    lines = (out / "ledger.jsonl").read_text().splitlines()
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / "rounds.jsonl").write_text((out / "rounds.jsonl").read_text())
    (forged / "ledger.jsonl").write_text(
        "\n".join(lines[:-1] + [lines[-1].replace("1", "2", 1)]) + "\n"
    )
    with pytest.raises(FieldError) as err:
        report_runs([out / "run.jsonl"], tmp_path / "report2", sections={"arena": forged})
    assert err.value.field == "arena"


def test_the_arena_preset_sets_the_replays_rounds() -> None:
    from pastcast.app import with_preset
    from pastcast_arena import ArenaReplayPlan

    mine = ArenaReplayPlan(dataset="world", agents=("market",), rounds=3)
    plan = with_preset(mine, "arena").round_plan()
    assert (plan.markets, plan.rounds, plan.selector.name) == (7, 3, "volume-activity")
    out = CliRunner().invoke(
        app, ["arena", "replay", "--dataset", "world", "-a", "market", "--preset", "x"]
    )
    assert out.exit_code == 2 and "--preset: unknown 'x'" in out.output
    out = CliRunner().invoke(
        app, ["arena", "replay", "--dataset", "world", "-a", "market", "--preset", "dojo"]
    )
    assert out.exit_code == 2 and "'dojo' sets nothing of the arena stage" in out.output


def test_the_command_line_and_python_record_the_same_replay(tmp_path: Path) -> None:
    from pastcast.app import read_plan, with_preset
    from pastcast_arena import PLAN_FILE, ArenaReplayPlan, arena_replay

    args = ["arena", "replay", "--dataset", "world:0", "-a", "market", "--preset", "arena"]
    args += ["--rounds", "1", "--markets", "2", "--out", str(tmp_path / "cli")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (tmp_path / "py").mkdir()
    mine = ArenaReplayPlan(
        dataset="world:0", agents=("market",), rounds=1, markets=2, out=tmp_path / "py"
    )
    arena_replay(with_preset(mine, "arena"))
    cli, python = (read_plan(tmp_path / d / PLAN_FILE, ArenaReplayPlan) for d in ("cli", "py"))
    assert cli == python.model_copy(update={"out": str(tmp_path / "cli")})
    assert (cli.preset, cli.markets, cli.selector) == ("arena", 2, "volume-activity")


def test_a_replay_on_a_local_anvil_node_scores_as_the_ledger(tmp_path: Path) -> None:
    from pastcast.dataset import save_dataset
    from pastcast_arena._contracts import find_foundry_tool

    if find_foundry_tool("anvil") is None:
        pytest.skip("anvil is missing (make test installs @foundry-rs/anvil from npm)")
    data = tmp_path / "ds"
    save_dataset(synthetic_dataset(), data)  # type: ignore[arg-type]
    runner = CliRunner()
    base = ["arena", "replay", "--dataset", str(data), "--agent", "market", "--agent", "random"]
    base += ["--rounds", "2", "--markets", "3", "--start", "2025-01-21", "--json"]
    boards = {}
    for backend in ("ledger", "anvil"):
        r = runner.invoke(app, [*base, "--backend", backend, "--out", str(tmp_path / backend)])
        assert r.exit_code == 0, r.output
        boards[backend] = json.loads(r.output)["leaderboard"]
    assert boards["anvil"] == boards["ledger"]
    bad = runner.invoke(
        app, [*base, "--rpc-url", "http://127.0.0.1:1", "--out", str(tmp_path / "x")]
    )
    assert bad.exit_code == 2 and "--rpc-url" in bad.output and "'evm'" in bad.output
