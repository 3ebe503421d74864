"""Foresight Arena on pastcast: commit-reveal forecasting rounds scored against the market.

Rounds of k binary markets (``plan_rounds``, pluggable ``SELECTORS``) with benchmark prices at
the commit deadline; the protocol in Python, byte for byte as the contracts compute it
(``commitment``, EIP-712 ``sign_commit``/``sign_reveal``); the Solidity contracts deployed on an
in-process EVM or a node (``EvmArena``) or the chain-less hash-chained ledger (``LedgerArena``);
the indexer and CSV/Parquet snapshots; the relayer; replays of datasets by pastcast agents
(``arena_replay``); per-round scoring and statistics (``arena_report``); the paper's simulation
(``simulate``); the live service (``arena_live``).

A distribution of its own on top of pastcast: it imports only pastcast's public names, and
reaches the ``pastcast`` command line (``pastcast arena ...``) and the reports through entry
points.
"""

from pastcast_arena._backend import ArenaBackend, ArenaRejected
from pastcast_arena._calibration import calibrate_simulation
from pastcast_arena._chain import EvmArena
from pastcast_arena._clob import ClobMarket, ClobPrices
from pastcast_arena._contracts import (
    artifacts,
    compile_contracts,
    find_foundry_tool,
)
from pastcast_arena._deployment import DEPLOYMENT_FILE, attach_deployment, write_deployment
from pastcast_arena._indexer import index_chain
from pastcast_arena._ledger import LedgerArena, LedgerError, verify_ledger
from pastcast_arena._live import LiveService
from pastcast_arena._live_file import arena_live, read_live_plan
from pastcast_arena._live_plan import LivePlan, ScaledClock
from pastcast_arena._node import lasting_node, local_node
from pastcast_arena._paper import (
    compare_with_paper,
)
from pastcast_arena._play import RoundPlayer, agent_key
from pastcast_arena._protocol import (
    Domain,
    commit_digest,
    commitment,
    condition_id_for,
    new_salt,
    predictions_hash,
    reasoning_digest,
    recover_commit_signer,
    recover_reveal_signer,
    reveal_digest,
    sign_commit,
    sign_reveal,
    to_bp,
)
from pastcast_arena._records import (
    OUTCOME_EXCLUDED,
    ArenaMarket,
    BenchmarkPrice,
    Round,
    RoundResult,
    SignedCommit,
    SignedReveal,
)
from pastcast_arena._relayer import RelayerPolicy, create_relayer
from pastcast_arena._relayer_client import RelayerClient
from pastcast_arena._replay import ReplayResult, read_results, replay
from pastcast_arena._reputation import chain_agents, chain_leaderboard, read_reputation
from pastcast_arena._round_play import ROUND_LOG, play_round_agents
from pastcast_arena._rounds import (
    SELECTORS,
    Candidate,
    DeadlinePrices,
    RoundPlan,
    Selector,
    benchmark_from_book,
    benchmark_from_dataset,
    benchmark_from_trades,
    plan_rounds,
    trend,
)
from pastcast_arena._scoring import outcome_code, payouts_for, score_bp, score_round
from pastcast_arena._simulation import (
    ARCHETYPES,
    CATEGORIES,
    FRONTIER_BAND,
    FRONTIER_KINDS,
    FRONTIER_T,
    MARKET_SLOPE,
    SimulationConfig,
    SimulationDraws,
    SimulationResult,
    simulate,
)
from pastcast_arena._snapshot import ArenaSnapshot, load_snapshot
from pastcast_arena._stats import ArenaReport, RoundRow, arena_report
from pastcast_arena._workflows import (
    PLAN_FILE,
    ArenaReplay,
    ArenaReplayPlan,
    arena_chain_leaderboard,
    arena_replay,
    arena_sections,
)

__all__ = [
    "ARCHETYPES",
    "CATEGORIES",
    "DEPLOYMENT_FILE",
    "FRONTIER_BAND",
    "FRONTIER_KINDS",
    "FRONTIER_T",
    "MARKET_SLOPE",
    "OUTCOME_EXCLUDED",
    "PLAN_FILE",
    "ROUND_LOG",
    "SELECTORS",
    "ArenaBackend",
    "ArenaMarket",
    "ArenaRejected",
    "ArenaReplay",
    "ArenaReplayPlan",
    "ArenaReport",
    "ArenaSnapshot",
    "BenchmarkPrice",
    "Candidate",
    "ClobMarket",
    "ClobPrices",
    "DeadlinePrices",
    "Domain",
    "EvmArena",
    "LedgerArena",
    "LedgerError",
    "LivePlan",
    "LiveService",
    "RelayerClient",
    "RelayerPolicy",
    "ReplayResult",
    "Round",
    "RoundPlan",
    "RoundPlayer",
    "RoundResult",
    "RoundRow",
    "ScaledClock",
    "Selector",
    "SignedCommit",
    "SignedReveal",
    "SimulationConfig",
    "SimulationDraws",
    "SimulationResult",
    "agent_key",
    "arena_chain_leaderboard",
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
    "chain_agents",
    "chain_leaderboard",
    "commit_digest",
    "commitment",
    "compare_with_paper",
    "compile_contracts",
    "condition_id_for",
    "create_relayer",
    "find_foundry_tool",
    "index_chain",
    "lasting_node",
    "load_snapshot",
    "local_node",
    "new_salt",
    "outcome_code",
    "payouts_for",
    "plan_rounds",
    "play_round_agents",
    "predictions_hash",
    "read_live_plan",
    "read_reputation",
    "read_results",
    "reasoning_digest",
    "recover_commit_signer",
    "recover_reveal_signer",
    "replay",
    "reveal_digest",
    "score_bp",
    "score_round",
    "sign_commit",
    "sign_reveal",
    "simulate",
    "to_bp",
    "trend",
    "verify_ledger",
    "write_deployment",
]
