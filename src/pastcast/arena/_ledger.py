"""The arena without a chain: an append-only, hash-chained JSON-lines ledger.

Each line is ``{"seq", "at", "prev", "record", "hash"}`` where ``hash`` is the SHA-256 of the
canonical JSON of the other four fields and ``prev`` the previous line's hash (64 zeros for the
genesis line). Records are applied through the same rules as the contract, with the same
reasons, before they are written (each line flushed and fsynced); commits and reveals are the
agents' EIP-712 signed messages, so anyone holding the file can check every signature, every
commitment and every score again (``verify_ledger``, ``pastcast arena verify``). Editing, dropping
or reordering a line breaks the chain. The ledger proves what its operator recorded, not when:
its clock is the operator's (a chain's block time is not).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pastcast.arena._backend import ArenaRejected
from pastcast.arena._protocol import (
    Domain,
    commitment,
    keccak_hex,
    recover_commit_signer,
    recover_reveal_signer,
)
from pastcast.arena._records import (
    MAX_BP,
    OUTCOME_EXCLUDED,
    RoundScore,
    SignedCommit,
    SignedReveal,
)
from pastcast.arena._scoring import YES_INDEX, outcome_code, score_bp
from pastcast.arena._snapshot import (
    ArenaSnapshot,
    IndexedAgent,
    IndexedCommit,
    IndexedOutcomes,
    IndexedReveal,
    IndexedRound,
    IndexedScore,
)

__all__ = ["GENESIS_PREV", "LedgerArena", "LedgerError", "LedgerSummary", "verify_ledger"]

GENESIS_PREV = "0" * 64
_ZERO32 = "0x" + "00" * 32


class LedgerError(ValueError):
    """A ledger that does not verify; the message names the file and line."""


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _line_hash(seq: int, at: int, prev: str, record: dict[str, Any]) -> str:
    return hashlib.sha256(
        _canonical({"seq": seq, "at": at, "prev": prev, "record": record})
    ).hexdigest()


@dataclass
class _Round:
    condition_ids: tuple[str, ...]
    commit_deadline: int
    reveal_deadline: int
    benchmarks: tuple[int, ...] | None = None
    outcomes: tuple[int, ...] | None = None
    revealers: list[str] = field(default_factory=list)
    scored: int = 0


@dataclass
class _Entry:
    commit_hash: str
    predictions: tuple[int, ...] | None = None
    salt: str = ""
    score: RoundScore | None = None


class _State:
    """The protocol's rules, as ``PredictionArena``, ``RoundManager`` and the registry state
    them; ``apply`` raises ``ArenaRejected`` with the contract's reason or returns the record
    to write (scores and outcomes are computed here, so a verifier recomputes them)."""

    def __init__(self, domain: Domain, yes_index: int) -> None:
        self.domain = domain
        self.yes_index = yes_index
        self.agents: dict[str, str] = {}
        self.rounds: dict[int, _Round] = {}
        self.nonces: dict[str, int] = {}
        self.entries: dict[tuple[int, str], _Entry] = {}
        self.payouts: dict[str, tuple[int, ...]] = {}
        self.snapshot_rows: dict[str, list[Any]] = {t: [] for t in ArenaSnapshot.TABLES}

    def _round(self, round_id: int) -> _Round:
        r = self.rounds.get(round_id)
        if r is None:
            raise ArenaRejected("Rounds: unknown round")
        return r

    def _use_signature(self, agent: str, nonce: int, deadline: int, signer: str, at: int) -> None:
        if at > deadline:
            raise ArenaRejected("Arena: signature expired")
        if nonce != self.nonces.get(agent, 0):
            raise ArenaRejected("Arena: invalid nonce")
        if signer != agent:
            raise ArenaRejected("Arena: signer is not the agent")

    def _signer(self, recover: Callable[[], str]) -> str:
        try:
            return recover()
        except ValueError as exc:
            raise ArenaRejected(f"Arena: invalid signature ({exc})") from None

    def apply(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        kind = rec.get("kind")
        handler = getattr(self, f"_apply_{kind}", None)
        if handler is None:
            raise ArenaRejected(f"unknown record kind {kind!r}")
        out: dict[str, Any] = handler(rec, at, ref, seq)
        return out

    def _apply_register(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        agent, name = str(rec["agent"]), str(rec["name"])
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
        self.snapshot_rows["rounds"].append(
            IndexedRound(
                round_id=round_id,
                condition_ids=ids,
                commit_deadline=commit_deadline,
                reveal_deadline=reveal_deadline,
            )
        )
        return {
            "kind": "round",
            "round_id": round_id,
            "condition_ids": list(ids),
            "commit_deadline": commit_deadline,
            "reveal_deadline": reveal_deadline,
        }

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
        signer = self._signer(lambda: recover_commit_signer(self.domain, msg))
        self._use_signature(msg.agent, msg.nonce, msg.deadline, signer, at)
        r = self._round(msg.round_id)
        if msg.agent not in self.agents:
            raise ArenaRejected("Arena: agent not registered")
        if at >= r.commit_deadline:
            raise ArenaRejected("Arena: commit phase is over")
        if msg.commit_hash == _ZERO32:
            raise ArenaRejected("Arena: empty commitment")
        if (msg.round_id, msg.agent) in self.entries:
            raise ArenaRejected("Arena: already committed")
        self.nonces[msg.agent] = msg.nonce + 1
        self.entries[(msg.round_id, msg.agent)] = _Entry(msg.commit_hash)
        self.snapshot_rows["commits"].append(
            IndexedCommit(
                round_id=msg.round_id,
                agent=msg.agent,
                commit_hash=msg.commit_hash,
                ref=ref,
                position=seq,
            )
        )
        return {"kind": "commit", "message": msg.model_dump(mode="json")}

    def _apply_reveal(self, rec: dict[str, Any], at: int, ref: str, seq: int) -> dict[str, Any]:
        msg = SignedReveal.model_validate(rec["message"])
        signer = self._signer(lambda: recover_reveal_signer(self.domain, msg))
        self._use_signature(msg.agent, msg.nonce, msg.deadline, signer, at)
        r = self._round(msg.round_id)
        if at < r.commit_deadline:
            raise ArenaRejected("Arena: commit phase still open")
        if at >= r.reveal_deadline:
            raise ArenaRejected("Arena: reveal window is over")
        entry = self.entries.get((msg.round_id, msg.agent))
        if entry is None:
            raise ArenaRejected("Arena: no commitment")
        if entry.predictions is not None:
            raise ArenaRejected("Arena: already revealed")
        if len(msg.predictions) != len(r.condition_ids):
            raise ArenaRejected("Arena: wrong number of predictions")
        if commitment(msg.round_id, msg.predictions, msg.salt) != entry.commit_hash:
            raise ArenaRejected("Arena: reveal does not match commitment")
        self.nonces[msg.agent] = msg.nonce + 1
        entry.predictions, entry.salt = msg.predictions, msg.salt
        r.revealers.append(msg.agent)
        self.snapshot_rows["reveals"].append(
            IndexedReveal(
                round_id=msg.round_id,
                agent=msg.agent,
                predictions=msg.predictions,
                salt=msg.salt,
                ref=ref,
                position=seq,
            )
        )
        return {"kind": "reveal", "message": msg.model_dump(mode="json")}

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
        self.snapshot_rows["outcomes"].append(
            IndexedOutcomes.model_validate(
                {
                    "round_id": round_id,
                    "outcomes": values,
                    "resolved": resolved,
                    "baseline_bp": baseline,
                }
            )
        )
        return {
            "kind": "outcomes",
            "round_id": round_id,
            "values": values,
            "resolved": resolved,
            "baseline_bp": baseline,
        }

    def pending_scores(self, round_id: int) -> list[dict[str, Any]]:
        """The score records ``calculateScoresForPendingReveals`` would write now."""
        r = self._round(round_id)
        if r.outcomes is None:
            raise ArenaRejected("Arena: outcomes not triggered")
        assert r.benchmarks is not None  # outcomes need them
        out = []
        for agent in r.revealers[r.scored :]:
            entry = self.entries[(round_id, agent)]
            assert entry.predictions is not None
            brier, alpha, n = score_bp(entry.predictions, r.benchmarks, r.outcomes)
            out.append(
                {
                    "kind": "score",
                    "round_id": round_id,
                    "agent": agent,
                    "brier_bp": brier,
                    "alpha_bp": alpha,
                    "resolved": n,
                }
            )
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
        self.entries[(round_id, score.agent)].score = score
        self.snapshot_rows["scores"].append(IndexedScore.model_validate(score.model_dump()))
        return expected

    def snapshot(self) -> ArenaSnapshot:
        return ArenaSnapshot.model_validate(self.snapshot_rows)


def _ledger_domain(chain_id: int, genesis_hash: str) -> Domain:
    # A ledger's stand-in for a contract address: derived from its genesis line, so a message
    # signed for one ledger cannot be replayed on another.
    address = "0x" + keccak_hex(bytes.fromhex(genesis_hash))[-40:]
    from eth_utils.address import to_checksum_address

    return Domain(chain_id=chain_id, verifying_contract=str(to_checksum_address(address)))


class LedgerArena:
    """The ``ArenaBackend`` over a ledger file. ``LedgerArena.create(path)`` starts one,
    ``LedgerArena.open(path)`` verifies an existing one and continues it.

    ``clock`` gives the current Unix time (the wall clock by default); ``frozen_at`` instead
    gives a clock that only ``advance_to`` moves (replays and tests).
    """

    def __init__(
        self,
        path: Path,
        state: _State,
        head: str,
        seq: int,
        last_at: int,
        clock: Callable[[], int] | None,
    ) -> None:
        self.path = path
        self._state = state
        self._head = head
        self._seq = seq
        self._last_at = last_at
        self._clock = clock or (lambda: int(time.time()))
        self._floor = last_at

    @classmethod
    def create(
        cls,
        path: str | Path,
        *,
        chain_id: int = 1,
        yes_index: int = YES_INDEX,
        clock: Callable[[], int] | None = None,
        frozen_at: int | None = None,
    ) -> LedgerArena:
        p = Path(path)
        if p.exists() and p.stat().st_size > 0:
            raise FileExistsError(f"{p}: a ledger already exists here (open it instead)")
        if frozen_at is not None:
            fixed = frozen_at
            clock = lambda: fixed  # noqa: E731
        at = int((clock or (lambda: int(time.time())))())
        genesis = {"kind": "genesis", "chain_id": chain_id, "yes_index": yes_index}
        digest = _line_hash(0, at, GENESIS_PREV, genesis)
        p.parent.mkdir(parents=True, exist_ok=True)
        _append(p, {"seq": 0, "at": at, "prev": GENESIS_PREV, "record": genesis, "hash": digest})
        state = _State(_ledger_domain(chain_id, digest), yes_index)
        return cls(p, state, digest, 0, at, clock)

    @classmethod
    def open(cls, path: str | Path, *, clock: Callable[[], int] | None = None) -> LedgerArena:
        p = Path(path)
        state, head, seq, last_at = _replay(p)
        return cls(p, state, head, seq, last_at, clock)

    # ------------------------------------------------------------------ writing

    def _write(self, record: dict[str, Any], *, simulate: bool = False) -> str:
        at = self.now()
        seq = self._seq + 1
        if simulate:
            # rules are checked against a throwaway copy of the state
            import copy

            copy.deepcopy(self._state).apply(record, at, "", seq)
            return ""
        applied = self._state.apply(record, at, "", seq)
        digest = _line_hash(seq, at, self._head, applied)
        self._patch_ref(digest)
        _append(
            self.path, {"seq": seq, "at": at, "prev": self._head, "record": applied, "hash": digest}
        )
        self._head, self._seq, self._last_at = digest, seq, at
        return digest

    def _patch_ref(self, digest: str) -> None:
        # commit and reveal rows name the line that holds them: its hash is known only now
        for table in ("commits", "reveals"):
            rows = self._state.snapshot_rows[table]
            if rows and rows[-1].ref == "":
                rows[-1] = rows[-1].model_copy(update={"ref": digest})

    # ------------------------------------------------------------------ ArenaBackend

    @property
    def domain(self) -> Domain:
        return self._state.domain

    @property
    def head(self) -> str:
        return self._head

    def now(self) -> int:
        return max(int(self._clock()), self._floor, self._last_at)

    def advance_to(self, timestamp: int) -> None:
        self._floor = max(self._floor, timestamp)

    def register(self, private_key: str, name: str) -> str:
        from eth_account import Account

        address = str(Account.from_key(private_key).address)
        self.register_address(address, name)
        return address

    def register_address(self, address: str, name: str) -> None:
        self._write({"kind": "register", "agent": address, "name": name})

    def create_round(
        self, condition_ids: Sequence[str], commit_deadline: int, reveal_deadline: int
    ) -> int:
        self._write(
            {
                "kind": "round",
                "condition_ids": list(condition_ids),
                "commit_deadline": commit_deadline,
                "reveal_deadline": reveal_deadline,
            }
        )
        return len(self._state.rounds)

    def set_benchmarks(self, round_id: int, prices_bp: Sequence[int]) -> None:
        self._write({"kind": "benchmarks", "round_id": round_id, "prices": list(prices_bp)})

    def nonce(self, agent: str) -> int:
        return self._state.nonces.get(agent, 0)

    def commit(self, msg: SignedCommit, *, simulate: bool = False) -> str:
        return self._write(
            {"kind": "commit", "message": msg.model_dump(mode="json")}, simulate=simulate
        )

    def reveal(self, msg: SignedReveal, *, simulate: bool = False) -> str:
        return self._write(
            {"kind": "reveal", "message": msg.model_dump(mode="json")}, simulate=simulate
        )

    def report_payouts(self, condition_id: str, numerators: Sequence[int]) -> None:
        self._write(
            {"kind": "payouts", "condition_id": condition_id, "numerators": list(numerators)}
        )

    def trigger_outcomes(self, round_id: int) -> tuple[int, ...]:
        self._write({"kind": "outcomes", "round_id": round_id})
        outcomes = self._state.rounds[round_id].outcomes
        assert outcomes is not None
        return outcomes

    def score_pending(self, round_id: int) -> tuple[RoundScore, ...]:
        out = []
        for rec in self._state.pending_scores(round_id):
            self._write(rec)
            out.append(RoundScore.model_validate({k: v for k, v in rec.items() if k != "kind"}))
        return tuple(out)

    def snapshot(self) -> ArenaSnapshot:
        return self._state.snapshot()


def _append(path: Path, line: dict[str, Any]) -> None:
    with path.open("ab") as fh:
        fh.write(_canonical(line) + b"\n")
        fh.flush()
        os.fsync(fh.fileno())


def _replay(path: Path) -> tuple[_State, str, int, int]:
    """Re-apply every line of ``path`` under the rules; the first problem is a ``LedgerError``."""
    if not path.is_file():
        raise LedgerError(f"{path}: no such ledger")
    state: _State | None = None
    head, last_at, seq = GENESIS_PREV, 0, -1
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            where = f"{path}:{lineno}"
            try:
                line = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise LedgerError(f"{where}: not JSON ({exc.msg})") from None
            if not isinstance(line, dict) or set(line) != {"seq", "at", "prev", "record", "hash"}:
                raise LedgerError(f"{where}: expected the fields seq, at, prev, record, hash")
            if line["seq"] != seq + 1:
                raise LedgerError(f"{where}: seq {line['seq']} follows {seq} (a line is missing)")
            if line["prev"] != head:
                raise LedgerError(f"{where}: prev does not match the previous line's hash")
            if not isinstance(line["at"], int) or line["at"] < last_at:
                raise LedgerError(f"{where}: at goes back in time")
            digest = _line_hash(line["seq"], line["at"], line["prev"], line["record"])
            if digest != line["hash"]:
                raise LedgerError(f"{where}: hash does not match the line's content")
            record = line["record"]
            if state is None:
                if record.get("kind") != "genesis":
                    raise LedgerError(f"{where}: the first line must be the genesis record")
                state = _State(
                    _ledger_domain(int(record["chain_id"]), digest), int(record["yes_index"])
                )
            else:
                try:
                    applied = state.apply(record, line["at"], line["hash"], line["seq"])
                except ArenaRejected as exc:
                    raise LedgerError(f"{where}: {record.get('kind')}: {exc.reason}") from None
                except (ValidationError, KeyError, TypeError, ValueError) as exc:
                    raise LedgerError(
                        f"{where}: malformed {record.get('kind')} record: {exc}"
                    ) from None
                if applied != record:
                    raise LedgerError(
                        f"{where}: {record.get('kind')} record differs from what the rules give: "
                        f"{json.dumps(applied, sort_keys=True)}"
                    )
            head, last_at, seq = digest, line["at"], line["seq"]
    if state is None:
        raise LedgerError(f"{path}: empty ledger")
    return state, head, seq, last_at


@dataclass(frozen=True)
class LedgerSummary:
    path: Path
    lines: int
    head: str
    snapshot: ArenaSnapshot


def verify_ledger(path: str | Path) -> LedgerSummary:
    """Check the hash chain, every signature, commitment, rule and score of a ledger."""
    p = Path(path)
    state, head, seq, _ = _replay(p)
    return LedgerSummary(p, seq + 1, head, state.snapshot())
