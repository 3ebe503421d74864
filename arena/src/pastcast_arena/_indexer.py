"""The arena's history from a chain's event logs alone (the paper's subgraph): what any third party
sees, never contract storage."""

from __future__ import annotations

from typing import Any

from pastcast_arena._chain import EvmArena, score_of
from pastcast_arena._snapshot import (
    ArenaSnapshot,
    IndexedAgent,
    IndexedCommit,
    IndexedOutcomes,
    IndexedReveal,
    IndexedRound,
)

__all__ = ["index_chain"]


def _hex(value: bytes) -> str:
    return "0x" + bytes(value).hex()


def _logs(contract: Any, event: str, from_block: int) -> list[Any]:
    logs: list[Any] = getattr(contract.events, event).get_logs(from_block=from_block)
    return sorted(logs, key=lambda e: (e.blockNumber, e.logIndex))


def index_chain(arena: EvmArena, from_block: int | None = None) -> ArenaSnapshot:
    """The snapshot of everything the deployment's contracts logged since ``from_block``
    (the deployment block by default)."""
    start = arena.deploy_block if from_block is None else from_block
    agents = tuple(
        IndexedAgent(agent_id=int(e.args.agentId), address=str(e.args.owner), name=e.args.agentURI)
        for e in _logs(arena.agent_registry, "Registered", start)
    )
    benchmarks = {
        int(e.args.roundId): tuple(int(p) for p in e.args.prices)
        for e in _logs(arena.round_manager, "BenchmarkPricesSet", start)
    }
    rounds = tuple(
        IndexedRound(
            round_id=int(e.args.roundId),
            condition_ids=tuple(_hex(c) for c in e.args.conditionIds),
            commit_deadline=int(e.args.commitDeadline),
            reveal_deadline=int(e.args.revealDeadline),
            benchmarks=benchmarks.get(int(e.args.roundId), ()),
        )
        for e in _logs(arena.round_manager, "RoundCreated", start)
    )
    commits = tuple(
        IndexedCommit(
            round_id=int(e.args.roundId),
            agent=str(e.args.agent),
            commit_hash=_hex(e.args.commitHash),
            ref=_hex(e.transactionHash),
            position=int(e.blockNumber),
        )
        for e in _logs(arena.arena, "Committed", start)
    )
    reveals = tuple(
        IndexedReveal(
            round_id=int(e.args.roundId),
            agent=str(e.args.agent),
            predictions=tuple(int(p) for p in e.args.predictions),
            salt=_hex(e.args.salt),
            ref=_hex(e.transactionHash),
            position=int(e.blockNumber),
        )
        for e in _logs(arena.arena, "Revealed", start)
    )
    outcomes = tuple(
        IndexedOutcomes.model_validate(
            {
                "round_id": int(e.args.roundId),
                "outcomes": [int(v) for v in e.args.outcomes],
                "resolved": int(e.args.resolvedCount),
                "baseline_bp": int(e.args.baselineBrierBp),
            }
        )
        for e in _logs(arena.arena, "OutcomesTriggered", start)
    )
    scores = tuple(map(score_of, _logs(arena.arena, "ScoreCalculated", start)))
    return ArenaSnapshot(
        agents=agents,
        rounds=rounds,
        commits=commits,
        reveals=reveals,
        outcomes=outcomes,
        scores=scores,
    )
