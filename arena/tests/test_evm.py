"""The contracts on py-evm: Python and the chain agree on hashes, signatures and scores for
hundreds of random inputs; direct transactions, cumulative totals, split payouts; the indexer
rebuilds the history from the logs alone."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from arena_helpers import key, make_round, needs_evm
from pastcast_arena import (
    SignedCommit,
    SignedReveal,
    index_chain,
    load_snapshot,
    sign_commit,
    sign_reveal,
)
from pastcast_arena._play import RoundPlayer
from pastcast_arena._protocol import (
    commitment,
    condition_id_for,
    message_digest,
    new_salt,
    predictions_hash,
)
from pastcast_arena._scoring import payouts_for, score_bp

needs_evm()

N = 200


def _batch(evm: Any) -> Any:
    """``ArenaBatch`` (many reads in one eth_call) deployed on ``evm``'s chain."""
    from pastcast_arena import artifacts

    return evm._deploy(artifacts()["ArenaBatch"]).functions


def _b(h: str) -> bytes:
    return bytes.fromhex(h[2:])


def test_python_and_the_evm_compute_the_same_commitments(evm: Any) -> None:
    rng = random.Random(1)
    rounds, preds, salts = [], [], []
    for _ in range(N):
        k = rng.randint(1, 12)
        preds.append([rng.choice((0, 10_000, rng.randint(0, 10_000))) for _ in range(k)])
        rounds.append(rng.choice((0, 1, rng.randint(0, 2**256 - 1))))
        salts.append(new_salt())
    b = _batch(evm)
    on_chain = b.commitHashes(evm.arena.address, rounds, preds, [_b(s) for s in salts]).call()
    assert ["0x" + h.hex() for h in on_chain] == [
        commitment(r, p, s) for r, p, s in zip(rounds, preds, salts, strict=True)
    ]
    on_chain = b.predictionsHashes(evm.arena.address, preds).call()
    assert ["0x" + h.hex() for h in on_chain] == [predictions_hash(p) for p in preds]


def test_python_signatures_are_the_digests_the_evm_recovers(evm: Any) -> None:
    rng = random.Random(2)
    dom = evm.domain
    messages, digests, agents = [], [], []
    for i in range(N):
        k = rng.randint(1, 8)
        preds = [rng.randint(0, 10_000) for _ in range(k)]
        round_id, nonce = rng.randint(1, 10**9), rng.randint(0, 10**6)
        deadline = rng.randint(0, 2**40)
        pk, salt = key(100 + i), new_salt()
        if i % 2:
            r: SignedReveal = sign_reveal(pk, dom, round_id, preds, salt, nonce, deadline)
            digests.append(message_digest(dom, r))
            fields = (predictions_hash(preds), salt, r.agent, True, r.signature)
        else:
            c: SignedCommit = sign_commit(
                pk, dom, round_id, commitment(round_id, preds, salt), nonce, deadline
            )
            digests.append(message_digest(dom, c))
            fields = (c.commit_hash, "0x" + "00" * 32, c.agent, False, c.signature)
        h, s, agent, is_reveal, sig = fields
        agents.append(agent)
        messages.append((round_id, _b(h), _b(s), agent, nonce, deadline, is_reveal, _b(sig)))
    on_chain, signers = _batch(evm).digestsAndSigners(evm.arena.address, messages).call()
    assert ["0x" + d.hex() for d in on_chain] == digests
    assert list(signers) == agents


def test_python_and_the_evm_score_alike(evm: Any) -> None:
    rng = random.Random(3)
    cases: list[tuple[list[int], list[int], list[int]]] = []
    while len(cases) < N:
        k = rng.randint(1, 10)
        preds = [rng.choice((0, 10_000, rng.randint(0, 10_000))) for _ in range(k)]
        bench = [rng.randint(0, 10_000) for _ in range(k)]
        outcomes = [rng.choice((0, 1, 1, 0, 2)) for _ in range(k)]
        if any(o != 2 for o in outcomes):
            cases.append((preds, bench, outcomes))
    briers, alphas, counts = (
        _batch(evm)
        .scores(evm.arena.address, *(list(col) for col in zip(*cases, strict=True)))
        .call()
    )
    assert list(zip(briers, alphas, counts, strict=True)) == [score_bp(*c) for c in cases]
    assert len({a for a in alphas}) > N // 2  # varied inputs, not one case repeated


def test_direct_transactions_totals_and_split_payouts(evm: Any) -> None:
    from eth_account import Account

    f = evm.arena.functions
    pk = key(40)
    agent = evm.register(pk, "direct")
    assert evm.agent_registry.functions.isRegistered(agent).call()
    totals0 = f.totals(agent).call()
    conds = [condition_id_for(f"direct-{i}") for i in range(3)]
    start = evm.now()
    rid = evm.create_round(conds, start + 600, start + 1200)
    salt = new_salt()
    preds = [9000, 2000, 5000]
    evm.transact_as(f.commit(rid, _b(commitment(rid, preds, salt))), pk)
    evm.advance_to(start + 600)
    evm.set_benchmarks(rid, [7000, 4000, 5000])
    evm.transact_as(f.reveal(rid, preds, _b(salt)), pk)
    evm.advance_to(start + 1200)
    evm.report_payouts(conds[0], payouts_for(True))
    evm.report_payouts(conds[1], payouts_for(False))
    evm.report_payouts(conds[2], (1, 1))  # a 50/50 split: neither YES nor NO, left out
    assert evm.trigger_outcomes(rid) == (1, 0, 2)
    (score,) = evm.score_pending(rid)
    assert (score.brier_bp, score.alpha_bp, score.resolved) == (
        *score_bp(preds, [7000, 4000, 5000], [1, 0, 2])[:2],
        2,
    )
    entry = f.getEntry(rid, agent).call()
    assert entry[1:5] == [True, True, preds, score.brier_bp]
    totals = f.totals(agent).call()
    assert totals[0] == totals0[0] + 1
    assert totals[1] == totals0[1] + score.brier_bp and totals[2] == totals0[2] + score.alpha_bp
    # an account with no identity cannot commit, even paying its own gas
    stranger = Account.from_key(key(41))
    evm.fund(stranger.address)
    rid2 = evm.create_round(conds[:1], evm.now() + 600, evm.now() + 1200)
    with pytest.raises(ValueError, match="agent not registered"):
        evm.transact_as(f.commit(rid2, b"\x01" * 32), key(41))


def test_simulation_changes_nothing(evm: Any) -> None:
    pk = key(50)
    agent = evm.register(pk, "sim")
    start = evm.now()
    rid = evm.create_round([condition_id_for("sim-0")], start + 600, start + 1200)
    msg = sign_commit(
        pk, evm.domain, rid, commitment(rid, [1], new_salt()), evm.nonce(agent), start + 600
    )
    evm.commit(msg, simulate=True)
    assert evm.nonce(agent) == msg.nonce
    evm.commit(msg)
    assert evm.nonce(agent) == msg.nonce + 1


def test_the_indexer_rebuilds_rounds_from_the_logs(evm: Any, tmp_path: Path) -> None:
    start_block = int(evm.w3.eth.block_number) + 1
    rnd = make_round([6000, 3000, 5000, 2500], tag="indexed")
    preds = {"ix-a": [8000, 1000, 5000, 2500], "ix-b": [6000, 3000, 5000, 2500]}
    player = RoundPlayer(evm, {n: key(60 + i) for i, n in enumerate(preds)})
    played = player.play(rnd, preds, [True, False, None, False])
    snap = index_chain(evm, from_block=start_block)
    assert [a.name for a in snap.agents] == ["ix-a", "ix-b"]
    (r,) = snap.rounds
    assert r.round_id == played.round.round_id
    assert r.condition_ids == tuple(m.condition_id for m in rnd.markets)
    assert r.benchmarks == (6000, 3000, 5000, 2500)
    assert len(snap.commits) == 2 and len(snap.reveals) == 2 and len(snap.scores) == 2
    assert snap.outcomes[0].outcomes == (1, 0, 2, 0)
    catalogue = {played.round.round_id: played.round}
    (res,) = snap.results(catalogue)
    assert res.scores == played.scores and res.predictions == played.predictions
    # snapshots round-trip through CSV and Parquet
    for fmt in ("csv", "parquet"):
        folder = snap.save(tmp_path / fmt, fmt)  # type: ignore[arg-type]
        assert load_snapshot(folder) == snap
    # without the catalogue, markets are named by condition id and prices marked as recorded
    (bare,) = snap.results()
    assert bare.round.markets[0].market_id == rnd.markets[0].condition_id
    assert {b.source for b in bare.round.benchmarks} == {"recorded"}
