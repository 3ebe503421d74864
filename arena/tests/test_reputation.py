"""The identity and reputation registries: a replay's scores reach the reputation registry, and
the leaderboard read from the chain alone equals the off-chain one (on py-evm and on anvil);
the registries' rules (only the scorer writes, once per round and agent, for registered agents;
a transfer moves the card, never the agent key); the leaderboard command reading a node."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena_helpers import key, make_round, needs_evm, synthetic_dataset
from pastcast.agents import agent_spec, register_agent
from pastcast.cli import app
from pastcast.env import Episode
from pastcast.records import Forecast
from pastcast_arena import (
    ArenaRejected,
    EvmArena,
    RoundPlan,
    arena_report,
    artifacts,
    chain_leaderboard,
    read_reputation,
    replay,
)
from pastcast_arena._play import RoundPlayer
from pastcast_arena._reputation import chain_agents

needs_evm()

START = datetime(2025, 1, 20, 16, 0, tzinfo=UTC)
PLAN = RoundPlan(markets=4, rounds=5, start=START, interval_days=4)


class LeaningAgent:
    """Says 0.35 whatever the question: a forecaster that is neither the market nor random."""

    def forecast(self, episode: Episode) -> Forecast:
        return Forecast(probs={"Yes": 0.35, "No": 0.65}, raw_text="lean")


@register_agent("test-reputation-lean")
def _lean() -> LeaningAgent:
    """Test agent: always 0.35."""
    return LeaningAgent()


AGENTS = (agent_spec("market"), agent_spec("random"), agent_spec("test-reputation-lean"))


@pytest.fixture(scope="module")
def replayed(evm: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[EvmArena, Any]:
    """A replay of three agents over five rounds (the last left unscored) on a deployment of its
    own on the module's chain."""
    arena = EvmArena(evm.w3)
    out = tmp_path_factory.mktemp("replay")
    resolve_by = datetime(2025, 2, 20, tzinfo=UTC)
    result = replay(synthetic_dataset(), None, AGENTS, out, arena, plan=PLAN, resolve_by=resolve_by)  # type: ignore[arg-type]
    return arena, result


def _fresh(evm: Any) -> EvmArena:
    return EvmArena(evm.w3)


# ---------------------------------------------------------------------- the leaderboard


def test_the_leaderboard_read_from_the_chain_is_the_off_chain_one(
    replayed: tuple[EvmArena, Any],
) -> None:
    arena, result = replayed
    scored = [r for r in result.results if r.scores]
    assert len(scored) >= 3 and len(scored) < len(result.results)  # an unscored round too
    off_chain = result.report.leaderboard
    assert {r.agent for r in off_chain} == {"market", "random", "test-reputation-lean"}
    assert all(r.rounds == len(scored) for r in off_chain)
    assert chain_leaderboard(arena) == off_chain
    # the market echo is a reference on chain too: its card says so
    board = {r.agent: r for r in chain_leaderboard(arena)}
    assert board["market"].role == "reference" and board["market"].alpha == 0.0
    assert board["random"].role == "agent" and board["random"].alpha_se is not None


def test_a_third_party_reads_the_same_leaderboard_from_the_registrys_address(
    replayed: tuple[EvmArena, Any],
) -> None:
    arena, result = replayed
    seen = EvmArena.attach(arena.w3, arena.reputation.address, from_block=arena.deploy_block)
    assert seen.addresses() == arena.addresses()
    assert chain_leaderboard(seen) == result.report.leaderboard


def test_every_score_is_one_entry_and_the_stored_sums_agree(
    replayed: tuple[EvmArena, Any],
) -> None:
    arena, result = replayed
    entries = read_reputation(arena)
    board = {r.agent: r for r in result.report.leaderboard}
    agents = {a.agent_id: a for a in chain_agents(arena)}
    names = {a.agent_id: a.uri for a in agents.values()}
    got = {(e.round_id, names[e.agent_id]): (e.brier_bp, e.alpha_bp, e.resolved) for e in entries}
    want = {
        (s.round_id, n): (s.brier_bp, s.alpha_bp, s.resolved)
        for r in result.results
        for n, s in r.scores.items()
    }
    assert got == want and len(entries) == len(want)
    for agent_id, a in agents.items():
        mine = [e for e in entries if e.agent_id == agent_id]
        rounds, preds, b, al, b2, a2 = arena.reputation.functions.getSummary(agent_id).call()
        assert (rounds, preds) == (len(mine), sum(e.resolved for e in mine))
        assert (b, al) == (sum(e.brier_bp for e in mine), sum(e.alpha_bp for e in mine))
        assert (b2, a2) == (sum(e.brier_bp**2 for e in mine), sum(e.alpha_bp**2 for e in mine))
        assert arena.reputation.functions.roundsOf(agent_id).call() == [e.round_id for e in mine]
        assert a.address == a.owner  # nobody transferred
        # the means and standard errors of the leaderboard, from the stored sums alone
        row = board[a.uri]
        assert row.rounds == rounds and row.predictions == preds
        assert row.brier == pytest.approx(b / rounds / 1e4)
        assert row.alpha == pytest.approx(al / rounds / 1e4)
        var = (a2 - al**2 / rounds) / (rounds - 1) / 1e8
        assert row.alpha_se == pytest.approx(math.sqrt(var / rounds), abs=1e-12)
        var = (b2 - b**2 / rounds) / (rounds - 1) / 1e8
        assert row.brier_se == pytest.approx(math.sqrt(var / rounds), abs=1e-12)


def test_a_tampered_entry_would_change_the_leaderboard(replayed: tuple[EvmArena, Any]) -> None:
    # the comparison above can fail: the same computation over one altered entry differs
    from pastcast_arena._stats import RoundRow, standings

    _, result = replayed
    report = arena_report(result.results)
    rows = list(report.per_round)
    rows[0] = rows[0].model_copy(update={"alpha": rows[0].alpha + 0.01})
    n_pred = {r.agent: r.predictions for r in report.leaderboard}
    roles = {r.agent: r.role for r in report.leaderboard}
    se = {r.agent: r.alpha_se_model for r in report.leaderboard}
    assert all(isinstance(r, RoundRow) for r in rows)
    assert standings(rows, n_pred, roles, se) != report.leaderboard  # type: ignore[arg-type]


def test_an_empty_registry_and_a_wrong_address_are_refused(evm: Any) -> None:
    arena = _fresh(evm)
    with pytest.raises(ValueError, match="no entries"):
        chain_leaderboard(arena)
    with pytest.raises(ValueError, match=r"not a reputation registry|no contract"):
        EvmArena.attach(arena.w3, arena.round_manager.address)
    with pytest.raises(ValueError, match="no contract there"):
        EvmArena.attach(arena.w3, "0x" + "11" * 20)
    with pytest.raises(ValueError, match="is not an arena"):
        EvmArena.attach(arena.w3, _own_registry(arena).address)  # its scorer is an account
    with pytest.raises(ValueError, match="not an address"):
        EvmArena.attach(arena.w3, "0x1234")


# ---------------------------------------------------------------------- the registries' rules


def test_only_the_scorer_writes(evm: Any) -> None:
    arena = _fresh(evm)
    arena.register(key(1), "a")
    assert arena.reputation.functions.scorer().call() == arena.arena.address
    with pytest.raises(ArenaRejected, match="Reputation: not the scorer"):
        arena.transact(arena.reputation.functions.recordScore(1, 1, 2000, 100, 2))
    with pytest.raises(ArenaRejected, match="Reputation: not the scorer"):
        arena.transact_as(arena.reputation.functions.recordScore(1, 1, 2000, 100, 2), key(1))
    # the deployer authorised the arena, once: nobody can swap in another scorer
    with pytest.raises(ArenaRejected, match="Reputation: scorer already set"):
        arena.transact(arena.reputation.functions.authoriseScorer(arena.operator))
    with pytest.raises(ArenaRejected, match="Reputation: not the admin"):
        arena.transact_as(arena.reputation.functions.authoriseScorer(arena.operator), key(1))
    assert read_reputation(arena) == ()


def _own_registry(arena: EvmArena) -> Any:
    """A reputation registry over the arena's identities whose scorer is the operator."""
    rep = arena._deploy(artifacts()["ReputationRegistry"], arena.agent_registry.address)
    arena.transact(rep.functions.authoriseScorer(arena.operator))
    return rep


def test_one_entry_per_round_and_agent_never_overwritten(evm: Any) -> None:
    arena = _fresh(evm)
    arena.register(key(1), "a")
    rep = _own_registry(arena)
    arena.transact(rep.functions.recordScore(3, 1, 2000, -150, 4))
    with pytest.raises(ArenaRejected, match="Reputation: entry already recorded"):
        arena.transact(rep.functions.recordScore(3, 1, 0, 5000, 4))
    assert rep.functions.getEntry(3, 1).call() == [True, 2000, -150, 4]
    arena.transact(rep.functions.recordScore(4, 1, 0, 5000, 4))  # another round
    assert rep.functions.getSummary(1).call()[:2] == [2, 8]


def test_an_unregistered_agent_and_out_of_range_scores_are_refused(evm: Any) -> None:
    arena = _fresh(evm)
    arena.register(key(1), "a")
    rep = _own_registry(arena)
    for agent_id in (0, 2):
        with pytest.raises(ArenaRejected, match="Reputation: agent not registered"):
            arena.transact(rep.functions.recordScore(1, agent_id, 2000, 100, 2))
    bad = {
        "Reputation: no round": (0, 1, 2000, 100, 2),
        "Reputation: Brier above 10000 bp": (1, 1, 10001, 100, 2),
        "Reputation: alpha out of range": (1, 1, 2000, -10001, 2),
        "Reputation: bad market count": (1, 1, 2000, 100, 0),
    }
    for reason, args in bad.items():
        with pytest.raises(ArenaRejected, match=reason):
            arena.transact(rep.functions.recordScore(*args))


def test_the_arena_records_each_score_once(evm: Any) -> None:
    arena = _fresh(evm)
    player = RoundPlayer(arena, {"a": key(1), "b": key(2)})
    res = player.play(
        make_round([6000, 3000]), {"a": (7000, 2000), "b": (5000, 5000)}, [True, None]
    )
    entries = read_reputation(arena)
    ids = {a.uri: a.agent_id for a in chain_agents(arena)}
    assert {(e.agent_id, e.brier_bp, e.alpha_bp, e.resolved) for e in entries} == {
        (ids[n], s.brier_bp, s.alpha_bp, s.resolved) for n, s in res.scores.items()
    }
    round_id = res.round.round_id
    assert arena.score_pending(round_id) == ()  # nothing left: nothing written twice
    assert len(read_reputation(arena)) == 2


def test_a_transfer_moves_the_card_not_the_agent_key(evm: Any) -> None:
    from eth_account import Account

    arena = _fresh(evm)
    player = RoundPlayer(arena, {"card": key(1)})
    agent = player.addresses["card"]
    holder = arena.register(key(2), "other")
    reg = arena.agent_registry.functions
    assert reg.ownerOf(1).call() == agent and reg.balanceOf(agent).call() == 1
    with pytest.raises(ArenaRejected, match="Registry: not the owner or approved"):
        arena.transact_as(reg.transferFrom(agent, holder, 1), key(2))
    with pytest.raises(ArenaRejected, match="Registry: transfer to the zero address"):
        arena.transact_as(reg.transferFrom(agent, "0x" + "00" * 20, 1), key(1))
    with pytest.raises(ArenaRejected, match="Registry: unknown agent"):
        arena.call(reg.ownerOf(3))
    arena.transact_as(reg.transferFrom(agent, holder, 1), key(1))
    assert reg.ownerOf(1).call() == holder and reg.balanceOf(holder).call() == 2
    # the key that registered is still agent 1; the holder's own key is still agent 2
    assert reg.agentIdOf(agent).call() == 1 and reg.agentAddress(1).call() == agent
    assert reg.agentIdOf(holder).call() == 2
    with pytest.raises(ArenaRejected, match="Registry: not the owner"):
        arena.transact_as(reg.setAgentURI(1, "the old holder"), key(1))
    arena.transact_as(reg.setAgentURI(1, "renamed"), key(2))
    cards = {a.agent_id: a for a in chain_agents(arena)}
    assert cards[1].uri == "renamed" and cards[1].owner == holder
    assert cards[1].address == agent == Account.from_key(key(1)).address
    # the agent key plays on under its id, and its entries land there; the holder is not it
    res = player.play(make_round([5000, 5000], tag="t"), {"card": (6000, 4000)}, [True, False])
    assert [e.agent_id for e in read_reputation(arena)] == [1]
    assert res.scores["card"].brier_bp == read_reputation(arena)[0].brier_bp


def test_a_role_other_than_agent_is_on_the_card(evm: Any) -> None:
    arena = _fresh(evm)
    arena.register(key(1), "market", role="reference")
    arena.register(key(2), "someone")
    roles = {a.uri: a.role for a in chain_agents(arena)}
    assert roles == {"market": "reference", "someone": "agent"}
    with pytest.raises(ArenaRejected, match="Registry: not the owner"):
        arena.transact_as(arena.agent_registry.functions.setMetadata(1, "role", b"agent"), key(2))


# ---------------------------------------------------------------------- the command


def test_the_report_command_reads_the_leaderboard_from_a_node(
    replayed: tuple[EvmArena, Any], tmp_path: Path
) -> None:
    arena, result = replayed
    if arena.tester is not None:
        pytest.skip("the in-process chain has no URL: the command reads a node (anvil)")
    url = arena.w3.provider.endpoint_uri
    runner = CliRunner()
    args = ["arena", "report", "--from-chain", url, "--reputation", arena.reputation.address]
    r = runner.invoke(app, [*args, "--from-block", str(arena.deploy_block), "--json"])
    assert r.exit_code == 0, r.output
    board = json.loads(r.output)["leaderboard"]
    assert board == [row.model_dump(mode="json") for row in result.report.leaderboard]
    # a replay's deployment file names the registry and the block
    deployment = tmp_path / "deployment.json"
    deployment.write_text(
        json.dumps({"deploy_block": arena.deploy_block, "contracts": arena.addresses()})
    )
    r = runner.invoke(
        app, ["arena", "report", "--from-chain", url, "--reputation", str(tmp_path), "--json"]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["leaderboard"] == board
    table = runner.invoke(
        app, ["arena", "report", "--from-chain", url, "--reputation", str(tmp_path)]
    )
    assert table.exit_code == 0 and "read from the chain" in table.output, table.output


def test_the_report_command_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    runner = CliRunner()
    cases = {
        ("--from-chain", "http://127.0.0.1:1"): "--reputation",
        ("--from-chain", "ftp://x", "--reputation", "0x" + "11" * 20): "--from-chain",
        ("--from-chain", "http://127.0.0.1:1", "--reputation", str(tmp_path)): "--reputation",
        ("--reputation", "0x" + "11" * 20): "--from-chain",
        ("--from-block", "3"): "--from-chain",
        (str(tmp_path / "rounds.jsonl"), "--from-chain", "http://127.0.0.1:1"): "not both",
        (): "rounds file",
    }
    for extra, needle in cases.items():
        r = runner.invoke(app, ["arena", "report", *extra])
        assert r.exit_code == 2 and needle in r.output, (extra, r.output)
        assert r.output.strip().count("\n") == 0, r.output
    bad = tmp_path / "deployment.json"
    bad.write_text('{"contracts": {}}')
    r = runner.invoke(
        app, ["arena", "report", "--from-chain", "http://127.0.0.1:1", "--reputation", str(bad)]
    )
    assert r.exit_code == 2 and "not a deployment file" in r.output, r.output
    r = runner.invoke(
        app,
        [
            "arena",
            "report",
            "--from-chain",
            "http://127.0.0.1:1",
            "--reputation",
            "0x" + "11" * 20,
        ],
    )
    assert r.exit_code == 2 and "--from-chain" in r.output, r.output


def test_a_replay_on_a_node_is_read_back_from_its_deployment_file(tmp_path: Path) -> None:
    from pastcast.dataset import save_dataset
    from pastcast_arena import ArenaReplayPlan, arena_replay, local_node
    from pastcast_arena._contracts import find_foundry_tool
    from pastcast_arena._deployment import DEPLOYMENT_FILE
    from pastcast_arena._workflows import arena_chain_leaderboard

    if find_foundry_tool("anvil") is None:
        pytest.skip("anvil is missing (make test installs @foundry-rs/anvil from npm)")
    data = tmp_path / "ds"
    save_dataset(synthetic_dataset(), data)  # type: ignore[arg-type]
    out = tmp_path / "out"
    out.mkdir()
    with local_node() as node:
        plan = ArenaReplayPlan(
            dataset=data,
            agents=("market", "random"),
            out=out,
            backend="evm",
            rpc_url=node.url,
            markets=3,
            rounds=3,
            start="2025-01-21",
        )
        played = arena_replay(plan)
        assert played.deployment == out / DEPLOYMENT_FILE
        record = json.loads(played.deployment.read_text())
        assert set(record["contracts"]) == {
            "AgentRegistry",
            "MockConditionalTokens",
            "PredictionArena",
            "ReputationRegistry",
            "RoundManager",
        }
        board = arena_chain_leaderboard(node.url, str(out))
        assert board == played.replay.report.leaderboard and len(board) == 2
