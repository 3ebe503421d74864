"""The arena without a chain: an append-only, hash-chained JSON-lines ledger (docs/arena.md, "The
ledger") whose records pass ``ArenaRules`` before they are written and again when verified. It
proves what its operator recorded, not when: its clock is the operator's."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pastcast import safejson
from pastcast.safejson import canonical_json
from pastcast.validation import first_problem
from pastcast_arena._protocol import ArenaRejected, Domain, keccak_hex
from pastcast_arena._records import RoundScore, SignedCommit, SignedReveal
from pastcast_arena._rules import ArenaRules
from pastcast_arena._scoring import YES_INDEX
from pastcast_arena._snapshot import ArenaSnapshot

GENESIS_PREV = "0" * 64


class LedgerError(ValueError):
    """A ledger that does not verify; the message names the file and line."""


def _line_hash(seq: int, at: int, prev: str, record: dict[str, Any]) -> str:
    line = {"seq": seq, "at": at, "prev": prev, "record": record}
    return hashlib.sha256(canonical_json(line).encode()).hexdigest()


def _ledger_domain(chain_id: int, genesis_hash: str) -> Domain:
    # A ledger's stand-in for a contract address: derived from its genesis line, so a message
    # signed for one ledger cannot be replayed on another.
    address = "0x" + keccak_hex(bytes.fromhex(genesis_hash))[-40:]
    from eth_utils.address import to_checksum_address

    return Domain(chain_id=chain_id, verifying_contract=str(to_checksum_address(address)))


class LedgerArena:
    """The ``ArenaBackend`` over a ledger file. ``LedgerArena.create(path)`` starts one,
    ``LedgerArena.open(path)`` verifies an existing one and continues it; ``clock`` gives the
    current Unix time (the wall clock by default), which ``advance_to`` moves on."""

    def __init__(
        self,
        path: Path,
        state: ArenaRules,
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
    ) -> LedgerArena:
        p = Path(path)
        if p.exists() and p.stat().st_size > 0:
            raise FileExistsError(f"{p}: a ledger already exists here (open it instead)")
        clock = clock or (lambda: int(time.time()))
        at = int(clock())
        genesis = {"kind": "genesis", "chain_id": chain_id, "yes_index": yes_index}
        digest = _line_hash(0, at, GENESIS_PREV, genesis)
        p.parent.mkdir(parents=True, exist_ok=True)
        _append(p, {"seq": 0, "at": at, "prev": GENESIS_PREV, "record": genesis, "hash": digest})
        state = ArenaRules(_ledger_domain(chain_id, digest), yes_index)
        return cls(p, state, digest, 0, at, clock)

    @classmethod
    def open(cls, path: str | Path, *, clock: Callable[[], int] | None = None) -> LedgerArena:
        p = Path(path)
        state, head, seq, last_at = _replay(p)
        return cls(p, state, head, seq, last_at, clock)

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
        # commit and reveal rows name the line that holds them: its hash is known only now
        for rows in (self._state.snapshot_rows[t] for t in ("commits", "reveals")):
            if rows and rows[-1].ref == "":
                rows[-1] = rows[-1].model_copy(update={"ref": digest})
        _append(
            self.path, {"seq": seq, "at": at, "prev": self._head, "record": applied, "hash": digest}
        )
        self._head, self._seq, self._last_at = digest, seq, at
        return digest

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

    def register(self, private_key: str, name: str, *, role: str = "agent") -> str:
        # the ledger's registration records carry no role: rounds.jsonl keeps the roles
        del role
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
        fh.write(canonical_json(line).encode() + b"\n")
        fh.flush()
        os.fsync(fh.fileno())


def _replay(path: Path) -> tuple[ArenaRules, str, int, int]:
    """Re-apply every line of ``path`` under the rules; the first problem is a ``LedgerError``."""
    if not path.is_file():
        raise LedgerError(f"{path}: no such ledger")
    state: ArenaRules | None = None
    head, last_at, seq = GENESIS_PREV, 0, -1
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            where = f"{path}:{lineno}"
            try:
                line = safejson.loads_line(raw)
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
                state = ArenaRules(
                    _ledger_domain(int(record["chain_id"]), digest), int(record["yes_index"])
                )
            else:
                try:
                    applied = state.apply(record, line["at"], line["hash"], line["seq"])
                except ArenaRejected as exc:
                    raise LedgerError(f"{where}: {record.get('kind')}: {exc.reason}") from None
                except (ValidationError, KeyError, TypeError, ValueError) as exc:
                    why = first_problem(exc) if isinstance(exc, ValidationError) else exc
                    raise LedgerError(
                        f"{where}: malformed {record.get('kind')} record: {why}"
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
