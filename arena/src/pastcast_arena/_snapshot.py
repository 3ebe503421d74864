"""The arena's history as tables (agents, rounds, commits, reveals, outcomes, scores), built by
the indexer (``index_chain``) from a chain's logs or by the ledger from its records, saved as CSV
(lists as JSON text) or Parquet, and turned back into ``RoundResult``s."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import ValidationError

from pastcast import safejson
from pastcast.records import Record
from pastcast.validation import first_problem
from pastcast_arena._chain import EvmArena, log_record
from pastcast_arena._records import (
    ArenaMarket,
    BenchmarkPrice,
    OutcomeCode,
    Round,
    RoundResult,
    RoundScore,
    utc,
)

R = TypeVar("R", bound=Record)


class SnapshotError(ValueError):
    """A snapshot file that cannot be read; the message names the file, row and field."""


class IndexedAgent(Record):
    agent_id: int
    address: str
    name: str


class IndexedRound(Record):
    round_id: int
    condition_ids: tuple[str, ...]
    commit_deadline: int
    reveal_deadline: int
    benchmarks: tuple[int, ...] = ()


class IndexedCommit(Record):
    round_id: int
    agent: str
    commit_hash: str
    ref: str
    """Transaction hash on a chain, record hash in a ledger."""
    position: int
    """Block number on a chain, sequence number in a ledger."""


class IndexedReveal(Record):
    round_id: int
    agent: str
    predictions: tuple[int, ...]
    salt: str
    ref: str
    position: int


class IndexedOutcomes(Record):
    round_id: int
    outcomes: tuple[OutcomeCode, ...]
    resolved: int
    baseline_bp: int


_TABLES: dict[str, type[Record]] = {
    "agents": IndexedAgent,
    "rounds": IndexedRound,
    "commits": IndexedCommit,
    "reveals": IndexedReveal,
    "outcomes": IndexedOutcomes,
    "scores": RoundScore,
}
_LIST_FIELDS = {"condition_ids", "benchmarks", "predictions", "outcomes"}


class ArenaSnapshot(Record):
    agents: tuple[IndexedAgent, ...] = ()
    rounds: tuple[IndexedRound, ...] = ()
    commits: tuple[IndexedCommit, ...] = ()
    reveals: tuple[IndexedReveal, ...] = ()
    outcomes: tuple[IndexedOutcomes, ...] = ()
    scores: tuple[RoundScore, ...] = ()

    TABLES: ClassVar[tuple[str, ...]] = tuple(_TABLES)

    def save(self, folder: str | Path, fmt: Literal["csv", "parquet"] = "csv") -> Path:
        """Write one file per table (``rounds.csv`` ... or ``rounds.parquet`` ...)."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        for table, model in _TABLES.items():
            rows = [r.model_dump(mode="json") for r in getattr(self, table)]
            fields = list(model.model_fields)
            if fmt == "csv":
                with (out / f"{table}.csv").open("w", newline="", encoding="utf-8") as fh:
                    writer = csv.DictWriter(fh, fieldnames=fields)
                    writer.writeheader()
                    for row in rows:
                        writer.writerow(
                            {k: json.dumps(v) if k in _LIST_FIELDS else v for k, v in row.items()}
                        )
            else:
                import pyarrow as pa
                import pyarrow.parquet as pq

                empty = pa.array([], type=pa.string())  # a table without rows: text columns
                columns = {f: pa.array([r[f] for r in rows]) if rows else empty for f in fields}
                pq.write_table(pa.table(columns), out / f"{table}.parquet")
        return out

    def results(
        self, catalogue: Mapping[int, Round] | None = None, roles: Mapping[str, str] | None = None
    ) -> tuple[RoundResult, ...]:
        """Finished (scored) rounds as ``RoundResult``s, agents named by their registered name;
        ``catalogue`` gives the rounds' off-chain description (its condition ids must match the
        recorded ones), without which markets are named by condition id, prices ``recorded``."""
        names = {a.address: a.name for a in self.agents}
        outcomes = {o.round_id: o for o in self.outcomes}
        out = []
        for r in sorted(self.rounds, key=lambda r: r.round_id):
            scored = [s for s in self.scores if s.round_id == r.round_id]
            if r.round_id not in outcomes or not scored:
                continue
            rnd = self._round(r, catalogue)
            preds = {
                names.get(v.agent, v.agent): v.predictions
                for v in self.reveals
                if v.round_id == r.round_id
            }
            named = (s.model_copy(update={"agent": names.get(s.agent, s.agent)}) for s in scored)
            scores = {s.agent: s for s in named}
            out.append(
                RoundResult(
                    round=rnd,
                    outcomes=outcomes[r.round_id].outcomes,
                    predictions={a: preds[a] for a in scores},
                    scores=scores,
                    roles={a: role for a, role in (roles or {}).items() if a in scores},
                )
            )
        return tuple(out)

    @staticmethod
    def _round(r: IndexedRound, catalogue: Mapping[int, Round] | None) -> Round:
        known = (catalogue or {}).get(r.round_id)
        if known is not None:
            ids = tuple(m.condition_id for m in known.markets)
            if ids != r.condition_ids:
                raise ValueError(
                    f"round {r.round_id}: the catalogue's markets are not the recorded ones"
                )
            if known.benchmark_bp() != r.benchmarks:
                raise ValueError(
                    f"round {r.round_id}: the catalogue's benchmarks are not the recorded ones"
                )
            return known
        deadline = utc(r.commit_deadline)
        markets = tuple(ArenaMarket(market_id=c, condition_id=c) for c in r.condition_ids)
        return Round(
            round_id=r.round_id,
            markets=markets,
            commit_deadline=deadline,
            reveal_deadline=utc(r.reveal_deadline),
            benchmarks=tuple(
                BenchmarkPrice(market_id=c, price_bp=p, source="recorded", observed_at=deadline)
                for c, p in zip(r.condition_ids, r.benchmarks, strict=True)
            ),
        )


def _read_table(path: Path, model: type[Record]) -> list[Record]:
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as fh:
            raw = list(csv.DictReader(fh))
        rows: list[dict[str, Any]] = []
        for i, row in enumerate(raw, start=2):
            try:
                rows.append(
                    {k: safejson.loads(v) if k in _LIST_FIELDS else v for k, v in row.items()}
                )
            except json.JSONDecodeError as exc:
                raise SnapshotError(f"{path}: row {i}: not a JSON list ({exc.msg})") from None
        first_row = 2
    else:
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
        first_row = 1
    out = []
    for i, row in enumerate(rows, start=first_row):
        try:
            out.append(model.model_validate(row))
        except ValidationError as exc:
            raise SnapshotError(first_problem(exc, f"{path}: row {i}")) from None
    return out


def load_snapshot(folder: str | Path) -> ArenaSnapshot:
    """Read a snapshot saved by ``ArenaSnapshot.save`` (CSV or Parquet, found by extension)."""
    root = Path(folder)
    tables: dict[str, list[Record]] = {}
    for table, model in _TABLES.items():
        found = [root / f"{table}.{ext}" for ext in ("csv", "parquet")]
        path = next((p for p in found if p.is_file()), None)
        if path is None:
            raise SnapshotError(f"{root}: no {table}.csv or {table}.parquet")
        tables[table] = _read_table(path, model)
    return ArenaSnapshot.model_validate(tables)


def snapshot_of(backend: Any) -> ArenaSnapshot:
    """What ``backend`` holds as tables: a ledger's own, a chain's read from its logs."""
    snap = getattr(backend, "snapshot", None)
    return snap() if callable(snap) else index_chain(backend)


# The indexer (the paper's subgraph): a chain's history from its event logs alone, what any
# third party sees, never contract storage.


def _logs(contract: Any, event: str, from_block: int) -> list[Any]:
    logs: list[Any] = getattr(contract.events, event).get_logs(from_block=from_block)
    return sorted(logs, key=lambda e: (e.blockNumber, e.logIndex))


def index_chain(arena: EvmArena, from_block: int | None = None) -> ArenaSnapshot:
    """The snapshot of everything the deployment's contracts logged since ``from_block``
    (the deployment block by default)."""
    start = arena.deploy_block if from_block is None else from_block

    def rows(contract: Any, event: str, model: type[R]) -> tuple[R, ...]:
        return tuple(log_record(model, e) for e in _logs(contract, event, start))

    benchmarks = {
        int(e.args.roundId): tuple(int(p) for p in e.args.prices)
        for e in _logs(arena.round_manager, "BenchmarkPricesSet", start)
    }
    rounds = rows(arena.round_manager, "RoundCreated", IndexedRound)
    return ArenaSnapshot(
        agents=rows(arena.agent_registry, "Registered", IndexedAgent),
        rounds=tuple(
            r.model_copy(update={"benchmarks": benchmarks.get(r.round_id, ())}) for r in rounds
        ),
        commits=rows(arena.arena, "Committed", IndexedCommit),
        reveals=rows(arena.arena, "Revealed", IndexedReveal),
        outcomes=rows(arena.arena, "OutcomesTriggered", IndexedOutcomes),
        scores=rows(arena.arena, "ScoreCalculated", RoundScore),
    )
