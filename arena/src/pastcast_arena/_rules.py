"""The protocol's rules in Python, with the contracts' revert strings as reasons; the ledger applies
every record through them when writing and again when verifying, so scores and outcomes are
recomputed, never trusted."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from pastcast_arena._protocol import ArenaRejected, Domain, commitment, recover_signer
from pastcast_arena._records import (
    MAX_BP,
    OUTCOME_EXCLUDED,
    Address,
    RoundScore,
    SignedCommit,
    SignedReveal,
)
from pastcast_arena._scoring import outcome_code, score_bp
from pastcast_arena._snapshot import (
    ArenaSnapshot,
    IndexedAgent,
    IndexedCommit,
    IndexedOutcomes,
    IndexedReveal,
    IndexedRound,
)

_ZERO32 = "0x" + "00" * 32
_ADDRESS: TypeAdapter[str] = TypeAdapter(Address)


@dataclass
class _Round:
    condition_ids: tuple[str, ...]
    commit_deadline: int
    reveal_deadline: int
    benchmarks: tuple[int, ...] | None = None
    outcomes: tuple[int, ...] | None = None
    commits: dict[str, str] = field(default_factory=dict)
    """Commit hashes by agent."""
    reveals: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Revealed predictions by agent, in the order revealed (the order scores come in)."""
    scored: int = 0


class ArenaRules:
    """The protocol's rules, as ``PredictionArena``, ``RoundManager`` and the registry state
    them; ``apply`` raises ``ArenaRejected`` with the contract's reason or returns the record
    to write (scores and outcomes are computed here, so a verifier recomputes them)."""

    def __init__(self, domain: Domain, yes_index: int) -> None:
        self.domain = domain
        self.yes_index = yes_index
        self.agents: dict[str, str] = {}
        self.rounds: dict[int, _Round] = {}
        self.nonces: dict[str, int] = {}
        self.payouts: dict[str, tuple[int, ...]] = {}
        self.snapshot_rows: dict[str, list[Any]] = {t: [] for t in ArenaSnapshot.TABLES}

    def _round(self, round_id: int) -> _Round:
        r = self.rounds.get(round_id)
        if r is None:
            raise ArenaRejected("Rounds: unknown round")
        return r

    def _check_signature(self, msg: SignedCommit | SignedReveal, at: int) -> None:
        try:
            signer = recover_signer(self.domain, msg)
        except ValueError as exc:
            raise ArenaRejected(f"Arena: invalid signature ({exc})") from None
        if at > msg.deadline:
            raise ArenaRejected("Arena: signature expired")
        if msg.nonce != self.nonces.get(msg.agent, 0):
            raise ArenaRejected("Arena: invalid nonce")
        if signer != msg.agent:
            raise ArenaRejected("Arena: signer is not the agent")

    def apply(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        kind = rec.get("kind")
        handler = getattr(self, f"_apply_{kind}", None)
        if handler is None:
            raise ArenaRejected(f"unknown record kind {kind!r}")
        out: dict[str, Any] = handler(rec, at, ref, seq)
        return out

    def _apply_register(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        agent, name = _ADDRESS.validate_python(rec["agent"]), str(rec["name"])
        if not name:
            raise ArenaRejected("Registry: empty name")
        if agent in self.agents:
            raise ArenaRejected("Registry: already registered")
        self.agents[agent] = name
        self.snapshot_rows["agents"].append(
            IndexedAgent(agent_id=len(self.agents), address=agent, name=name)
        )
        return {"kind": "register", "agent": agent, "name": name}

    def _apply_round(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        ids = tuple(str(c).lower() for c in rec["condition_ids"])
        commit_deadline, reveal_deadline = int(rec["commit_deadline"]), int(rec["reveal_deadline"])
        if not 0 < len(ids) <= 64:
            raise ArenaRejected("Rounds: bad market count")
        if commit_deadline <= at:
            raise ArenaRejected("Rounds: commit deadline in the past")
        if reveal_deadline <= commit_deadline:
            raise ArenaRejected("Rounds: reveal deadline before commit deadline")
        round_id = len(self.rounds) + 1
        if rec.get("round_id", round_id) != round_id:
            raise ArenaRejected(f"Rounds: the next round id is {round_id}")
        self.rounds[round_id] = _Round(ids, commit_deadline, reveal_deadline)
        row = IndexedRound(
            round_id=round_id,
            condition_ids=ids,
            commit_deadline=commit_deadline,
            reveal_deadline=reveal_deadline,
        )
        self.snapshot_rows["rounds"].append(row)
        return {"kind": "round", **row.model_dump(mode="json", exclude={"benchmarks"})}

    def _apply_benchmarks(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        round_id = int(rec["round_id"])
        r = self._round(round_id)
        prices = tuple(int(p) for p in rec["prices"])
        if at < r.commit_deadline:
            raise ArenaRejected("Rounds: commit phase still open")
        if r.benchmarks is not None:
            raise ArenaRejected("Rounds: benchmark prices already set")
        if len(prices) != len(r.condition_ids):
            raise ArenaRejected("Rounds: wrong number of prices")
        if any(not 0 <= p <= MAX_BP for p in prices):
            raise ArenaRejected("Rounds: price above 10000 bp")
        r.benchmarks = prices
        rows = self.snapshot_rows["rounds"]
        rows[round_id - 1] = rows[round_id - 1].model_copy(update={"benchmarks": prices})
        return {"kind": "benchmarks", "round_id": round_id, "prices": list(prices)}

    def _apply_commit(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        msg = SignedCommit.model_validate(rec["message"])
        self._check_signature(msg, at)
        r = self._round(msg.round_id)
        if msg.agent not in self.agents:
            raise ArenaRejected("Arena: agent not registered")
        if at >= r.commit_deadline:
            raise ArenaRejected("Arena: commit phase is over")
        if msg.commit_hash == _ZERO32:
            raise ArenaRejected("Arena: empty commitment")
        if msg.agent in r.commits:
            raise ArenaRejected("Arena: already committed")
        r.commits[msg.agent] = msg.commit_hash
        return self._accept("commit", msg, ref, seq)

    def _apply_reveal(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        msg = SignedReveal.model_validate(rec["message"])
        self._check_signature(msg, at)
        r = self._round(msg.round_id)
        if at < r.commit_deadline:
            raise ArenaRejected("Arena: commit phase still open")
        if at >= r.reveal_deadline:
            raise ArenaRejected("Arena: reveal window is over")
        committed = r.commits.get(msg.agent)
        if committed is None:
            raise ArenaRejected("Arena: no commitment")
        if msg.agent in r.reveals:
            raise ArenaRejected("Arena: already revealed")
        if len(msg.predictions) != len(r.condition_ids):
            raise ArenaRejected("Arena: wrong number of predictions")
        if commitment(msg.round_id, msg.predictions, msg.salt) != committed:
            raise ArenaRejected("Arena: reveal does not match commitment")
        r.reveals[msg.agent] = msg.predictions
        return self._accept("reveal", msg, ref, seq)

    def _accept(
        self, kind: str, msg: SignedCommit | SignedReveal, ref: str, seq: int
    ) -> dict[str, Any]:
        """A message taken: the agent's nonce moves on, its row joins the snapshot's."""
        self.nonces[msg.agent] = msg.nonce + 1
        model = IndexedCommit if kind == "commit" else IndexedReveal
        row = msg.model_dump(include=set(model.model_fields))
        self.snapshot_rows[f"{kind}s"].append(model(**row, ref=ref, position=seq))
        return {"kind": kind, "message": msg.model_dump(mode="json")}

    def _apply_payouts(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        cid = str(rec["condition_id"]).lower()
        numerators = tuple(int(n) for n in rec["numerators"])
        if cid in self.payouts:
            raise ArenaRejected("CTF: already resolved")
        if len(numerators) < 2:
            raise ArenaRejected("CTF: need at least two outcome slots")
        if sum(numerators) <= 0 or min(numerators) < 0:
            raise ArenaRejected("CTF: payouts are all zero")
        self.payouts[cid] = numerators
        return {"kind": "payouts", "condition_id": cid, "numerators": list(numerators)}

    def _apply_outcomes(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        round_id = int(rec["round_id"])
        r = self._round(round_id)
        if r.outcomes is not None:
            raise ArenaRejected("Arena: outcomes already triggered")
        if at < r.reveal_deadline:
            raise ArenaRejected("Arena: reveal window still open")
        if r.benchmarks is None:
            raise ArenaRejected("Arena: benchmark prices not set")
        values = []
        for cid in r.condition_ids:
            nums = self.payouts.get(cid)
            values.append(
                OUTCOME_EXCLUDED if nums is None else outcome_code(nums, sum(nums), self.yes_index)
            )
        resolved = sum(v != OUTCOME_EXCLUDED for v in values)
        if resolved == 0:
            raise ArenaRejected("Arena: no market resolved yet")
        baseline = score_bp(r.benchmarks, r.benchmarks, values)[0]
        r.outcomes = tuple(values)
        fields = {"round_id": round_id, "resolved": resolved, "baseline_bp": baseline}
        self.snapshot_rows["outcomes"].append(
            IndexedOutcomes.model_validate({**fields, "outcomes": values})
        )
        return {"kind": "outcomes", **fields, "values": values}

    def pending_scores(self, round_id: int) -> list[dict[str, Any]]:
        """The score records ``calculateScoresForPendingReveals`` would write now."""
        r = self._round(round_id)
        if r.outcomes is None:
            raise ArenaRejected("Arena: outcomes not triggered")
        assert r.benchmarks is not None  # outcomes need them
        out = []
        for agent, predictions in list(r.reveals.items())[r.scored :]:
            brier, alpha, n = score_bp(predictions, r.benchmarks, r.outcomes)
            score = {"round_id": round_id, "agent": agent, "brier_bp": brier, "alpha_bp": alpha}
            out.append({"kind": "score", **score, "resolved": n})
        return out

    def _apply_score(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        round_id = int(rec["round_id"])
        pending = self.pending_scores(round_id)
        if not pending:
            raise ArenaRejected("Arena: no reveal waiting for a score")
        expected = pending[0]
        if rec != expected:
            raise ArenaRejected(f"Arena: score record differs from the computed {expected}")
        r = self.rounds[round_id]
        r.scored += 1
        score = RoundScore.model_validate({k: v for k, v in expected.items() if k != "kind"})
        self.snapshot_rows["scores"].append(score)
        return expected

    def snapshot(self) -> ArenaSnapshot:
        return ArenaSnapshot.model_validate(self.snapshot_rows)
