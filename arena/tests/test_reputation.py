"""The identity and reputation registries: a replay's scores reach the reputation registry as the
arena's ERC-8004 feedback, and the leaderboard read from the chain alone equals the off-chain one
(on py-evm and on anvil); the registries' rules (feedback from anyone but the agent's owner and
operators, for registered agents, revoked by its client only; only the arena's feedback reaches
the leaderboard; the identity token is an ERC-721 whose transfer moves the card, never the agent
key); the leaderboard command reading a node."""

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


def test_a_third_party_reads_the_same_leaderboard_from_the_arenas_address(
    replayed: tuple[EvmArena, Any],
) -> None:
    arena, result = replayed
    seen = EvmArena.attach(arena.w3, arena.arena.address, from_block=arena.deploy_block)
    assert seen.addresses() == arena.addresses()
    assert chain_leaderboard(seen) == result.report.leaderboard


def test_every_score_is_two_feedback_entries_and_the_registrys_summary_agrees(
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
    rep, client = arena.reputation.functions, [arena.arena.address]
    for agent_id, a in agents.items():
        mine = [e for e in entries if e.agent_id == agent_id]
        assert rep.getClients(agent_id).call() == client
        assert rep.getLastIndex(agent_id, client[0]).call() == 2 * len(mine)
        listed = rep.readAllFeedback(agent_id, client, "", "", False).call()
        assert listed[4] == ["brier", "alpha"] * len(mine)
        assert listed[5] == [str(e.round_id) for e in mine for _ in "ba"]
        assert set(listed[3]) == {4} and not any(listed[6])
        row = board[a.uri]
        for tag, col, mean in (("brier", "brier_bp", row.brier), ("alpha", "alpha_bp", row.alpha)):
            count, value, decimals = rep.getSummary(agent_id, client, tag, "").call()
            values = [getattr(e, col) for e in mine]
            assert (count, decimals) == (len(mine), 4)
            assert value == math.trunc(sum(values) / len(values))  # toward zero, as Solidity
            assert mean == pytest.approx(sum(values) / len(values) / 1e4)
        assert a.address == a.owner  # nobody transferred
        assert row.rounds == len(mine) and row.predictions == sum(e.resolved for e in mine)


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
    with pytest.raises(ValueError, match="not an arena"):
        EvmArena.attach(arena.w3, arena.reputation.address)
    with pytest.raises(ValueError, match="no contract at 0x1111"):
        EvmArena.attach(arena.w3, "0x" + "11" * 20)
    with pytest.raises(ValueError, match="not an address"):
        EvmArena.attach(arena.w3, "0x1234")


# ---------------------------------------------------------------------- the registries' rules


def _feedback(value: int, tag1: str = "brier", tag2: str = "1", decimals: int = 4) -> tuple:
    return (value, decimals, tag1, tag2, "", "", b"\0" * 32)


def test_feedback_comes_from_anyone_but_the_agents_owner_and_operators(evm: Any) -> None:
    arena = _fresh(evm)
    agent = arena.register(key(1), "a")
    client = arena.register(key(2), "b")  # a funded key: a client like any other
    rep, reg = arena.reputation.functions, arena.agent_registry.functions
    with pytest.raises(ArenaRejected, match="Reputation: self-feedback"):
        arena.transact_as(rep.giveFeedback(1, *_feedback(9000)), key(1))
    arena.transact_as(reg.setApprovalForAll(client, True), key(1))
    with pytest.raises(ArenaRejected, match="Reputation: self-feedback"):
        arena.transact_as(rep.giveFeedback(1, *_feedback(9000)), key(2))
    arena.transact_as(reg.setApprovalForAll(client, False), key(1))
    arena.transact_as(reg.approve(client, 1), key(1))
    with pytest.raises(ArenaRejected, match="Reputation: self-feedback"):
        arena.transact_as(rep.giveFeedback(1, *_feedback(9000)), key(2))
    arena.transact_as(reg.approve("0x" + "00" * 20, 1), key(1))
    arena.transact_as(rep.giveFeedback(1, *_feedback(9000)), key(2))
    assert rep.readFeedback(1, client, 1).call() == [9000, 4, "brier", "1", False]
    assert rep.getClients(1).call() == [client] and agent != client


def test_another_clients_feedback_never_reaches_the_leaderboard(evm: Any) -> None:
    arena = _fresh(evm)
    player = RoundPlayer(arena, {"a": key(1), "b": key(2)})
    res = player.play(
        make_round([6000, 3000]), {"a": (7000, 2000), "b": (5000, 5000)}, [True, True]
    )
    before = (read_reputation(arena), chain_leaderboard(arena))
    # a client writes the arena's tags for the same round, and a round the arena never scored
    rep, round_id = arena.reputation.functions, str(res.round.round_id)
    other = arena.register(key(3), "c")
    for tag, tag2 in (("brier", round_id), ("alpha", round_id), ("brier", "99"), ("alpha", "99")):
        arena.transact_as(rep.giveFeedback(1, *_feedback(0, tag, tag2)), key(3))
    assert rep.getClients(1).call() == [arena.arena.address, other]
    assert (read_reputation(arena), chain_leaderboard(arena)) == before


def test_feedback_is_indexed_per_client_revoked_by_it_once_and_answered(evm: Any) -> None:
    arena = _fresh(evm)
    arena.register(key(1), "a")
    client = arena.register(key(2), "b")
    responder = arena.register(key(3), "c")
    rep = arena.reputation.functions
    for value in (9000, -150, 5000):
        arena.transact_as(rep.giveFeedback(1, *_feedback(value)), key(2))
    assert rep.getLastIndex(1, client).call() == 3
    assert rep.getSummary(1, [client], "brier", "").call() == [3, 4616, 4]
    with pytest.raises(ArenaRejected, match="Reputation: no such feedback"):
        arena.transact_as(rep.revokeFeedback(1, 2), key(3))  # not its feedback
    arena.transact_as(rep.revokeFeedback(1, 2), key(2))
    with pytest.raises(ArenaRejected, match="Reputation: already revoked"):
        arena.transact_as(rep.revokeFeedback(1, 2), key(2))
    assert rep.readFeedback(1, client, 2).call() == [-150, 4, "brier", "1", True]
    assert rep.getSummary(1, [client], "brier", "").call() == [2, 7000, 4]
    assert rep.readAllFeedback(1, [], "", "", False).call()[1] == [1, 3]
    assert rep.readAllFeedback(1, [], "", "", True).call()[1] == [1, 2, 3]
    with pytest.raises(ArenaRejected, match="Reputation: name the clients"):
        arena.call(rep.getSummary(1, [], "", ""))
    # anyone answers a feedback, as often as it likes
    arena.transact_as(rep.appendResponse(1, client, 2, "ipfs://reply", b"\0" * 32), key(3))
    arena.transact_as(rep.appendResponse(1, client, 2, "ipfs://again", b"\0" * 32), key(3))
    arena.transact_as(rep.appendResponse(1, client, 3, "ipfs://reply", b"\0" * 32), key(1))
    assert rep.getResponseCount(1, client, 2, []).call() == 2
    assert rep.getResponseCount(1, client, 0, [responder]).call() == 2
    assert rep.getResponseCount(1, "0x" + "00" * 20, 0, []).call() == 3
    with pytest.raises(ArenaRejected, match="Reputation: no such feedback"):
        arena.transact_as(rep.appendResponse(1, client, 4, "ipfs://x", b"\0" * 32), key(3))
    with pytest.raises(ArenaRejected, match="Reputation: empty response URI"):
        arena.transact_as(rep.appendResponse(1, client, 1, "", b"\0" * 32), key(3))


def test_feedback_on_an_unknown_agent_and_out_of_range_values_are_refused(evm: Any) -> None:
    arena = _fresh(evm)
    arena.register(key(1), "a")
    arena.register(key(2), "b")
    rep = arena.reputation.functions
    for agent_id in (0, 3):
        with pytest.raises(ArenaRejected, match="Registry: unknown agent"):
            arena.transact_as(rep.giveFeedback(agent_id, *_feedback(1)), key(2))
    with pytest.raises(ArenaRejected, match="Reputation: too many decimals"):
        arena.transact_as(rep.giveFeedback(1, *_feedback(1, decimals=19)), key(2))
    for value in (10**38 + 1, -(10**38) - 1):
        with pytest.raises(ArenaRejected, match="Reputation: value too large"):
            arena.transact_as(rep.giveFeedback(1, *_feedback(value)), key(2))
    arena.transact_as(rep.giveFeedback(1, *_feedback(10**38, decimals=18)), key(2))


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


ERC_165_721_METADATA = ("01ffc9a7", "80ac58cd", "5b5e139f")


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
    assert [reg.supportsInterface(bytes.fromhex(i)).call() for i in ERC_165_721_METADATA] == [
        True
    ] * 3
    assert not reg.supportsInterface(b"\xff" * 4).call()
    assert reg.getAgentWallet(1).call() == agent
    arena.transact_as(reg.approve(holder, 1), key(1))
    arena.transact_as(reg.safeTransferFrom(agent, holder, 1), key(2))  # approved; to a key
    assert reg.getApproved(1).call() == "0x" + "00" * 20  # the approval went with the token
    assert reg.getAgentWallet(1).call() == "0x" + "00" * 20  # ERC-8004: the wallet too
    assert reg.ownerOf(1).call() == holder and reg.balanceOf(holder).call() == 2
    # the key that registered is still agent 1; the holder's own key is still agent 2
    assert reg.agentIdOf(agent).call() == 1 and reg.agentAddress(1).call() == agent
    assert reg.agentIdOf(holder).call() == 2
    with pytest.raises(ArenaRejected, match="Registry: not the owner or approved"):
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
    from eth_account import Account

    arena = _fresh(evm)
    arena.register(key(1), "market", role="reference")
    arena.register(key(2), "someone")
    roles = {a.uri: a.role for a in chain_agents(arena)}
    assert roles == {"market": "reference", "someone": "agent"}
    reg = arena.agent_registry.functions
    with pytest.raises(ArenaRejected, match="Registry: not the owner or approved"):
        arena.transact_as(reg.setMetadata(1, "role", b"agent"), key(2))
    with pytest.raises(ArenaRejected, match="Registry: reserved key"):
        arena.transact_as(reg.setMetadata(1, "agentWallet", b"\1" * 20), key(1))
    arena.fund(Account.from_key(key(3)).address)
    with pytest.raises(ArenaRejected, match="Registry: reserved key"):
        arena.transact_as(reg.register("x", [("agentWallet", b"\1" * 20)]), key(3))


# ---------------------------------------------------------------------- the command


def test_the_report_command_reads_the_leaderboard_from_a_node(
    replayed: tuple[EvmArena, Any], tmp_path: Path
) -> None:
    arena, result = replayed
    if arena.tester is not None:
        pytest.skip("the in-process chain has no URL: the command reads a node (anvil)")
    url = arena.w3.provider.endpoint_uri
    runner = CliRunner()
    args = ["arena", "report", "--from-chain", url, "--arena", arena.arena.address]
    r = runner.invoke(app, [*args, "--from-block", str(arena.deploy_block), "--json"])
    assert r.exit_code == 0, r.output
    board = json.loads(r.output)["leaderboard"]
    assert board == [row.model_dump(mode="json") for row in result.report.leaderboard]
    # a replay's deployment file names the arena and the block
    from pastcast_arena._chain import write_deployment

    deployment = write_deployment(arena, tmp_path / "deployment.json", url)
    assert json.loads(deployment.read_text())["deploy_block"] == arena.deploy_block
    r = runner.invoke(
        app, ["arena", "report", "--from-chain", url, "--arena", str(tmp_path), "--json"]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["leaderboard"] == board
    table = runner.invoke(app, ["arena", "report", "--from-chain", url, "--arena", str(tmp_path)])
    assert table.exit_code == 0 and "read from the chain" in table.output, table.output


def test_the_report_command_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    runner = CliRunner()
    cases = {
        ("--from-chain", "http://127.0.0.1:1"): "--arena",
        ("--from-chain", "ftp://x", "--arena", "0x" + "11" * 20): "--from-chain",
        ("--from-chain", "http://127.0.0.1:1", "--arena", str(tmp_path)): "--arena",
        ("--arena", "0x" + "11" * 20): "--from-chain",
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
        app, ["arena", "report", "--from-chain", "http://127.0.0.1:1", "--arena", str(bad)]
    )
    assert r.exit_code == 2 and "not a deployment record" in r.output, r.output
    r = runner.invoke(
        app,
        [
            "arena",
            "report",
            "--from-chain",
            "http://127.0.0.1:1",
            "--arena",
            "0x" + "11" * 20,
        ],
    )
    assert r.exit_code == 2 and "--from-chain" in r.output, r.output


def test_a_replay_on_a_node_is_read_back_from_its_deployment_file(tmp_path: Path) -> None:
    from pastcast.dataset import save_dataset
    from pastcast_arena import ArenaReplayPlan, arena_replay, local_node
    from pastcast_arena._chain import DEPLOYMENT_FILE
    from pastcast_arena._contracts import find_foundry_tool
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
