"""Foresight Arena on pastcast: commit-reveal forecasting rounds scored against the market
(docs/arena.md). A distribution of its own: it imports only pastcast's public names, and joins
the ``pastcast`` command line (``pastcast arena ...``) and the reports through entry points."""

from pastcast_arena._calibration import calibrate_simulation
from pastcast_arena._chain import EvmArena, attach_deployment
from pastcast_arena._contracts import artifacts
from pastcast_arena._ledger import LedgerArena, verify_ledger
from pastcast_arena._live import LiveService
from pastcast_arena._live_file import arena_live
from pastcast_arena._node import lasting_node, local_node
from pastcast_arena._play import agent_key
from pastcast_arena._protocol import (
    ArenaRejected,
    reasoning_digest,
    sign_commit,
    sign_reveal,
    to_bp,
)
from pastcast_arena._records import (
    ArenaMarket,
    BenchmarkPrice,
    Round,
    RoundResult,
    SignedCommit,
    SignedReveal,
)
from pastcast_arena._replay import ROUND_LOG, play_round_agents, replay
from pastcast_arena._reputation import chain_leaderboard, read_reputation
from pastcast_arena._rounds import (
    SELECTORS,
    Candidate,
    ClobPrices,
    DeadlinePrices,
    RoundPlan,
    Selector,
    benchmark_from_book,
    benchmark_from_dataset,
    benchmark_from_trades,
    plan_rounds,
    trend,
)
from pastcast_arena._simulation import (
    ARCHETYPES,
    CATEGORIES,
    MARKET_SLOPE,
    SimulationDraws,
    simulate,
)
from pastcast_arena._snapshot import ArenaSnapshot, index_chain, load_snapshot
from pastcast_arena._stats import arena_report
from pastcast_arena._workflows import PLAN_FILE, ArenaReplayPlan, arena_replay, arena_sections

__all__ = [
    "ARCHETYPES",
    "CATEGORIES",
    "MARKET_SLOPE",
    "PLAN_FILE",
    "ROUND_LOG",
    "SELECTORS",
    "ArenaMarket",
    "ArenaRejected",
    "ArenaReplayPlan",
    "ArenaSnapshot",
    "BenchmarkPrice",
    "Candidate",
    "ClobPrices",
    "DeadlinePrices",
    "EvmArena",
    "LedgerArena",
    "LiveService",
    "Round",
    "RoundPlan",
    "RoundResult",
    "Selector",
    "SignedCommit",
    "SignedReveal",
    "SimulationDraws",
    "agent_key",
    "arena_live",
    "arena_replay",
    "arena_report",
    "arena_sections",
    "artifacts",
    "attach_deployment",
    "benchmark_from_book",
    "benchmark_from_dataset",
    "benchmark_from_trades",
    "calibrate_simulation",
    "chain_leaderboard",
    "index_chain",
    "lasting_node",
    "load_snapshot",
    "local_node",
    "plan_rounds",
    "play_round_agents",
    "read_reputation",
    "reasoning_digest",
    "replay",
    "sign_commit",
    "sign_reveal",
    "simulate",
    "to_bp",
    "trend",
    "verify_ledger",
]
