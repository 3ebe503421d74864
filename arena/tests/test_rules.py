"""The protocol's rules, on the real EVM and on the ledger alike: a valid round scores as
computed by hand; every way to cheat or to act out of phase is refused with the same reason."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena_helpers import key, needs_evm
from pastcast_arena import (
    ArenaRejected,
    EvmArena,
    LedgerArena,
    local_node,
    sign_commit,
    sign_reveal,
)
from pastcast_arena._contracts import find_foundry_tool
from pastcast_arena._protocol import commitment, condition_id_for
from pastcast_arena._scoring import payouts_for

needs_evm()

SALT = "0x" + "42" * 32
_tags = itertools.count()


@pytest.fixture(scope="module", params=["py-evm", "anvil", "ledger"])
def arena(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    with ExitStack() as node:
        backend: Any
        if request.param == "py-evm":
            backend = EvmArena()
        elif request.param == "anvil":
            if find_foundry_tool("anvil") is None:
                pytest.skip("anvil is missing (make test installs @foundry-rs/anvil from npm)")
            backend = EvmArena.connect(node.enter_context(local_node()).url)
        else:
            path = tmp_path_factory.mktemp("ledger") / "ledger.jsonl"
            backend = LedgerArena.create(path, clock=lambda: 1_750_000_000)
        for i in range(3):
            backend.register(key(i), f"agent-{i}")
        yield backend


@dataclass
class Round:
    arena: Any
    round_id: int
    commit_deadline: int
    reveal_deadline: int
    conditions: list[str]

    def address(self, i: int) -> str:
        from eth_account import Account

        return str(Account.from_key(key(i)).address)

    def commit(
        self,
        i: int,
        preds: list[int],
        *,
        salt: str = SALT,
        signer: int | None = None,
        deadline: int | None = None,
        nonce: int | None = None,
    ) -> Any:
        a = self.arena
        agent = self.address(i)
        msg = sign_commit(
            key(i if signer is None else signer),
            a.domain,
            self.round_id,
            commitment(self.round_id, preds, salt),
            a.nonce(agent) if nonce is None else nonce,
            self.commit_deadline if deadline is None else deadline,
        )
        if signer is not None:  # claims to be agent i, signed by someone else
            msg = msg.model_copy(update={"agent": agent})
        a.commit(msg)
        return msg

    def reveal(
        self, i: int, preds: list[int], *, salt: str = SALT, deadline: int | None = None
    ) -> Any:
        a = self.arena
        msg = sign_reveal(
            key(i),
            a.domain,
            self.round_id,
            preds,
            salt,
            a.nonce(self.address(i)),
            self.reveal_deadline if deadline is None else deadline,
        )
        a.reveal(msg)
        return msg

    def to_reveal_phase(self, benchmarks: list[int]) -> None:
        self.arena.advance_to(self.commit_deadline)
        self.arena.set_benchmarks(self.round_id, benchmarks)

    def resolve(self, yes: list[bool | None]) -> tuple[int, ...]:
        self.arena.advance_to(self.reveal_deadline)
        for cid, v in zip(self.conditions, yes, strict=True):
            if v is not None:
                self.arena.report_payouts(cid, payouts_for(v))
        return tuple(self.arena.trigger_outcomes(self.round_id))


def new_round(arena: Any, k: int = 3) -> Round:
    conditions = [condition_id_for(f"rules-{next(_tags)}") for _ in range(k)]
    start = arena.now()
    rid = arena.create_round(conditions, start + 3600, start + 7200)
    return Round(arena, rid, start + 3600, start + 7200, conditions)


def rejected(reason: str) -> Any:
    return pytest.raises(ArenaRejected, match=reason)


def test_a_valid_commit_and_reveal_scores_as_computed_by_hand(arena: Any) -> None:
    r = new_round(arena)
    r.commit(0, [8000, 1000, 5000])
    r.commit(1, [6000, 3000, 5000])  # echoes the market
    r.to_reveal_phase([6000, 3000, 5000])
    r.reveal(0, [8000, 1000, 5000])
    r.reveal(1, [6000, 3000, 5000])
    # YES, NO, and a market not resolved by then: left out of scoring
    assert r.resolve([True, False, None]) == (1, 0, 2)
    scores = {s.agent: s for s in arena.score_pending(r.round_id)}
    a, m = scores[r.address(0)], scores[r.address(1)]
    # agent: ((8000-10000)^2 + 1000^2) / (2 * 10000) = 250 bp; market: (4000^2 + 3000^2) / 2e4
    assert (a.brier_bp, a.alpha_bp, a.resolved) == (250, 1000, 2)
    assert (m.brier_bp, m.alpha_bp) == (1250, 0)
    assert (a.brier, a.alpha) == (0.025, 0.1)
    assert arena.score_pending(r.round_id) == ()  # nothing left to score


def test_a_tampered_reveal_is_refused(arena: Any) -> None:
    r = new_round(arena)
    r.commit(0, [7000, 7000, 7000])
    r.to_reveal_phase([5000, 5000, 5000])
    with rejected("reveal does not match commitment"):
        r.reveal(0, [7000, 7000, 7001])
    with rejected("reveal does not match commitment"):
        r.reveal(0, [7000, 7000, 7000], salt="0x" + "43" * 32)
    r.reveal(0, [7000, 7000, 7000])
    with rejected("already revealed"):
        r.reveal(0, [7000, 7000, 7000])


def test_a_replayed_nonce_is_refused(arena: Any) -> None:
    r = new_round(arena)
    msg = r.commit(0, [1, 2, 3])
    with rejected("invalid nonce"):
        arena.commit(msg)  # the same signed message again
    r2 = new_round(arena)
    with rejected("invalid nonce"):  # an old nonce, freshly signed for another round
        r2.commit(0, [1, 2, 3], nonce=msg.nonce)


def test_an_expired_signature_is_refused(arena: Any) -> None:
    r = new_round(arena)
    with rejected("signature expired"):
        r.commit(0, [1, 2, 3], deadline=arena.now() - 1)


def test_a_message_signed_by_someone_else_is_refused(arena: Any) -> None:
    r = new_round(arena)
    with rejected("signer is not the agent"):
        r.commit(0, [1, 2, 3], signer=1)


def test_a_second_commit_is_refused(arena: Any) -> None:
    r = new_round(arena)
    r.commit(0, [1, 2, 3])
    with rejected("already committed"):
        r.commit(0, [3, 2, 1])


def test_a_reveal_before_the_deadline_is_refused(arena: Any) -> None:
    r = new_round(arena)
    r.commit(0, [1, 2, 3])
    with rejected("commit phase still open"):
        r.reveal(0, [1, 2, 3])


def test_a_commit_after_the_deadline_is_refused(arena: Any) -> None:
    r = new_round(arena)
    arena.advance_to(r.commit_deadline)
    # a signature valid past the deadline: the phase, not the signature's expiry, refuses it
    with rejected("commit phase is over"):
        r.commit(0, [1, 2, 3], deadline=r.commit_deadline + 3600)


def test_scoring_before_outcomes_is_refused(arena: Any) -> None:
    r = new_round(arena)
    r.commit(0, [1, 2, 3])
    r.to_reveal_phase([5000, 5000, 5000])
    r.reveal(0, [1, 2, 3])
    with rejected("outcomes not triggered"):
        arena.score_pending(r.round_id)
    with rejected("reveal window still open"):
        arena.trigger_outcomes(r.round_id)
    arena.advance_to(r.reveal_deadline)
    with rejected("no market resolved yet"):
        arena.trigger_outcomes(r.round_id)
    with rejected("outcomes not triggered"):
        arena.score_pending(r.round_id)


def test_phase_and_membership_rules(arena: Any) -> None:
    r = new_round(arena)
    with rejected("agent not registered"):
        r.commit(9, [1, 2, 3])
    with rejected("commit phase still open"):
        arena.set_benchmarks(r.round_id, [1, 2, 3])
    r.commit(0, [1, 2, 3])
    arena.advance_to(r.commit_deadline)
    with rejected("wrong number of prices"):
        arena.set_benchmarks(r.round_id, [1, 2])
    arena.set_benchmarks(r.round_id, [1, 2, 3])
    with rejected("benchmark prices already set"):
        arena.set_benchmarks(r.round_id, [1, 2, 3])
    with rejected("no commitment"):
        r.reveal(1, [1, 2, 3])
    arena.advance_to(r.reveal_deadline)
    # a development node's clock runs on after the jump, so a signature that expires at the
    # window's end may expire first; a later one leaves the window as the only reason
    with rejected("reveal window is over"):
        r.reveal(0, [1, 2, 3], deadline=r.reveal_deadline + 3600)
    with rejected("unknown round"):
        arena.set_benchmarks(10_000, [1])


def test_outcomes_need_benchmarks_and_come_from_payouts(arena: Any) -> None:
    r = new_round(arena, k=2)
    arena.advance_to(r.reveal_deadline)
    arena.report_payouts(r.conditions[0], payouts_for(True))
    with rejected("benchmark prices not set"):
        arena.trigger_outcomes(r.round_id)
    with rejected("already resolved"):
        arena.report_payouts(r.conditions[0], payouts_for(False))


def test_ledger_and_chain_agree_on_a_whole_round(tmp_path: Path, evm: Any) -> None:
    from arena_helpers import make_round
    from pastcast_arena._play import RoundPlayer

    rnd = make_round([6000, 3000, 5000, 9000, 100, 4200, 5100], tag=f"agree-{next(_tags)}")
    preds = {
        "x": [8000, 1000, 5000, 9999, 0, 10_000, 4321],
        "y": [6000, 3000, 5000, 9000, 100, 4200, 5100],
        "z": [5000] * 7,
    }
    resolved: list[bool | None] = [True, False, None, True, False, True, False]
    keys = {n: key(10 + i) for i, n in enumerate(preds)}
    on_chain = RoundPlayer(evm, keys).play(rnd, preds, resolved)
    ledger = LedgerArena.create(tmp_path / "l.jsonl", clock=lambda: 1_750_000_000)
    off_chain = RoundPlayer(ledger, keys).play(rnd, preds, resolved)
    assert on_chain.outcomes == off_chain.outcomes == (1, 0, 2, 1, 0, 1, 0)
    assert {n: (s.brier_bp, s.alpha_bp, s.resolved) for n, s in on_chain.scores.items()} == {
        n: (s.brier_bp, s.alpha_bp, s.resolved) for n, s in off_chain.scores.items()
    }
    assert on_chain.scores["y"].alpha_bp == 0
