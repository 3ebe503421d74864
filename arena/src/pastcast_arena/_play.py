"""Play rounds through an arena (the EVM or the ledger alike): create, commit, benchmark, reveal,
resolve, score. A replayed round gets fresh deadlines on the arena's own clock; its historical
ones stay in the ``Round`` the agents forecast at."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, cast

from pastcast_arena._protocol import (
    ArenaBackend,
    commitment,
    keccak_hex,
    new_salt,
    require_evm_extra,
    sign_commit,
    sign_reveal,
)
from pastcast_arena._records import (
    OutcomeCode,
    Round,
    RoundResult,
    SignedCommit,
    SignedReveal,
)
from pastcast_arena._scoring import payouts_for

PHASE_S = 3600
"""How long a replayed round's commit and reveal phases last on the arena's clock."""


def agent_key(name: str, secret: str = "pastcast-arena") -> str:
    """A deterministic private key for a named agent of a replay (never for real funds)."""
    return keccak_hex(f"{secret}:{name}".encode())


class Submitter(Protocol):
    """Where signed messages go: the arena itself (an ``ArenaBackend``), or a relayer in front
    of it."""

    def commit(self, msg: SignedCommit) -> object: ...

    def reveal(self, msg: SignedReveal) -> object: ...


class RoundPlayer:
    """Registers the agents once, then plays rounds on ``backend``."""

    def __init__(
        self,
        backend: ArenaBackend,
        keys: Mapping[str, str],
        *,
        roles: Mapping[str, str] | None = None,
        submitter: Submitter | None = None,
    ) -> None:
        require_evm_extra()
        self.backend = backend
        self.keys = dict(keys)
        self.roles = dict(roles or {})
        self.submitter: Submitter = submitter or backend
        self.addresses = {
            name: backend.register(key, name, role=self.roles.get(name, "agent"))
            for name, key in self.keys.items()
        }
        self._reported: set[str] = set()

    def play(
        self,
        round_: Round,
        predictions: Mapping[str, Sequence[int]],
        resolved_yes: Sequence[bool | None],
    ) -> RoundResult:
        """One round: ``predictions`` by agent name (bp), ``resolved_yes`` per market (None:
        not resolved by scoring time, so excluded). A round none of whose markets resolved
        cannot be scored yet: it stays open on the arena and comes back without scores."""
        if len(resolved_yes) != round_.k:
            raise ValueError(
                f"round {round_.round_id}: {len(resolved_yes)} outcomes for {round_.k}"
            )
        b = self.backend
        commit_deadline = b.now() + PHASE_S
        reveal_deadline = commit_deadline + PHASE_S
        round_id = b.create_round(
            [m.condition_id for m in round_.markets], commit_deadline, reveal_deadline
        )
        salts = {name: new_salt() for name in predictions}
        for name, preds in predictions.items():
            key, agent = self.keys[name], self.addresses[name]
            c = commitment(round_id, preds, salts[name])
            msg = sign_commit(key, b.domain, round_id, c, b.nonce(agent), commit_deadline)
            self.submitter.commit(msg)
        b.advance_to(commit_deadline)
        b.set_benchmarks(round_id, round_.benchmark_bp())
        for name, preds in predictions.items():
            key, agent = self.keys[name], self.addresses[name]
            msg_r = sign_reveal(
                key, b.domain, round_id, preds, salts[name], b.nonce(agent), reveal_deadline
            )
            self.submitter.reveal(msg_r)
        b.advance_to(reveal_deadline)
        for market, yes in zip(round_.markets, resolved_yes, strict=True):
            if yes is not None and market.condition_id not in self._reported:
                b.report_payouts(market.condition_id, payouts_for(yes))
                self._reported.add(market.condition_id)
        played = round_.model_copy(update={"round_id": round_id})
        revealed = {n: tuple(p) for n, p in predictions.items()}
        if all(v is None for v in resolved_yes):
            # the arena would refuse to trigger ("no market resolved yet"): the round stays open
            return RoundResult(
                round=played, outcomes=(2,) * round_.k, predictions=revealed, scores={}
            )
        outcomes = b.trigger_outcomes(round_id)
        names = {a: n for n, a in self.addresses.items()}
        scores = {
            names[s.agent]: s.model_copy(update={"agent": names[s.agent], "round_id": round_id})
            for s in b.score_pending(round_id)
        }
        codes = tuple(cast(OutcomeCode, v if v in (0, 1) else 2) for v in outcomes)
        return RoundResult(
            round=played,
            outcomes=codes,
            predictions=revealed,
            scores=dict(sorted(scores.items())),
            roles={n: r for n, r in self.roles.items() if n in predictions and r != "agent"},
        )
