"""Foresight Arena: commit-reveal forecasting rounds scored against the market.

Rounds of k binary markets (``plan_rounds``, pluggable ``SELECTORS``) with benchmark prices at
the commit deadline; the protocol in Python, byte for byte as the contracts compute it
(``commitment``, EIP-712 ``sign_commit``/``sign_reveal``); the Solidity contracts deployed on an
in-process EVM (``EvmArena``) or the chain-less hash-chained ledger (``LedgerArena``); the
indexer and CSV/Parquet snapshots; the relayer; replays of resolved markets by pastcast agents;
per-round scoring and statistics (``arena_report``) and the paper's simulation (``simulate``).

The EVM parts need the ``arena`` extra (web3, eth-tester, eth-account, FastAPI); the
simulation, scoring and statistics do not.
"""

from pastcast.arena._backend import ArenaBackend, ArenaRejected
from pastcast.arena._calibration import CalibrationFit, calibrate_simulation
from pastcast.arena._chain import EvmArena
from pastcast.arena._clob import ClobMarket, ClobPrices, clob_markets
from pastcast.arena._contracts import (
    CONTRACTS,
    SOLC_VERSION,
    artifacts,
    compile_contracts,
    find_foundry_tool,
    find_solcjs,
    write_artifacts,
)
from pastcast.arena._figures import ARENA_FIGURES, arena_figures, write_arena_figures
from pastcast.arena._indexer import index_chain
from pastcast.arena._ledger import LedgerArena, LedgerError, LedgerSummary, verify_ledger
from pastcast.arena._node import LocalNode, local_node
from pastcast.arena._paper import (
    PAPER_CATEGORIES,
    PAPER_LEADERBOARD,
    PAPER_MARKET_BRIER,
    PaperCategory,
    PaperComparison,
    PaperRow,
    compare_with_paper,
)
from pastcast.arena._play import RoundPlayer, Submitter, agent_key
from pastcast.arena._protocol import (
    Domain,
    commit_digest,
    commit_typed_data,
    commitment,
    condition_id_for,
    new_salt,
    predictions_hash,
    recover_commit_signer,
    recover_reveal_signer,
    require_evm_extra,
    reveal_digest,
    reveal_typed_data,
    sign_commit,
    sign_reveal,
    to_bp,
)
from pastcast.arena._records import (
    MAX_BP,
    OUTCOME_EXCLUDED,
    OUTCOME_NO,
    OUTCOME_YES,
    UNCATEGORIZED,
    ArenaMarket,
    BenchmarkPrice,
    Round,
    RoundResult,
    RoundScore,
    SignedCommit,
    SignedReveal,
)
from pastcast.arena._relayer import DEFAULT_HOST, RelayerPolicy, create_relayer
from pastcast.arena._replay import FALLBACK_BP, ReplayResult, arena_name, read_results, replay
from pastcast.arena._rounds import (
    SELECTORS,
    Candidate,
    DeadlinePrices,
    RoundPlan,
    Selector,
    benchmark_from_book,
    benchmark_from_dataset,
    benchmark_from_trades,
    dataset_candidates,
    plan_rounds,
    trend,
)
from pastcast.arena._scoring import YES_INDEX, outcome_code, payouts_for, score_bp, score_round
from pastcast.arena._section import arena_section
from pastcast.arena._simulation import (
    ARCHETYPES,
    CATEGORIES,
    MARKET_SLOPE,
    Archetype,
    Category,
    PowerRow,
    SimulationConfig,
    SimulationDraws,
    SimulationResult,
    allocate_rounds,
    power_table,
    simulate,
)
from pastcast.arena._snapshot import ArenaSnapshot, SnapshotError, load_snapshot
from pastcast.arena._stats import (
    ArenaReport,
    CategoryRow,
    LeaderboardRow,
    MurphyRow,
    RoundRow,
    arena_report,
    market_rows,
)

__all__ = [
    "ARCHETYPES",
    "ARENA_FIGURES",
    "CATEGORIES",
    "CONTRACTS",
    "DEFAULT_HOST",
    "FALLBACK_BP",
    "MARKET_SLOPE",
    "MAX_BP",
    "OUTCOME_EXCLUDED",
    "OUTCOME_NO",
    "OUTCOME_YES",
    "PAPER_CATEGORIES",
    "PAPER_LEADERBOARD",
    "PAPER_MARKET_BRIER",
    "SELECTORS",
    "SOLC_VERSION",
    "UNCATEGORIZED",
    "YES_INDEX",
    "Archetype",
    "ArenaBackend",
    "ArenaMarket",
    "ArenaRejected",
    "ArenaReport",
    "ArenaSnapshot",
    "BenchmarkPrice",
    "CalibrationFit",
    "Candidate",
    "Category",
    "CategoryRow",
    "ClobMarket",
    "ClobPrices",
    "DeadlinePrices",
    "Domain",
    "EvmArena",
    "LeaderboardRow",
    "LedgerArena",
    "LedgerError",
    "LedgerSummary",
    "LocalNode",
    "MurphyRow",
    "PaperCategory",
    "PaperComparison",
    "PaperRow",
    "PowerRow",
    "RelayerPolicy",
    "ReplayResult",
    "Round",
    "RoundPlan",
    "RoundPlayer",
    "RoundResult",
    "RoundRow",
    "RoundScore",
    "Selector",
    "SignedCommit",
    "SignedReveal",
    "SimulationConfig",
    "SimulationDraws",
    "SimulationResult",
    "SnapshotError",
    "Submitter",
    "agent_key",
    "allocate_rounds",
    "arena_figures",
    "arena_name",
    "arena_report",
    "arena_section",
    "artifacts",
    "benchmark_from_book",
    "benchmark_from_dataset",
    "benchmark_from_trades",
    "calibrate_simulation",
    "clob_markets",
    "commit_digest",
    "commit_typed_data",
    "commitment",
    "compare_with_paper",
    "compile_contracts",
    "condition_id_for",
    "create_relayer",
    "dataset_candidates",
    "find_foundry_tool",
    "find_solcjs",
    "index_chain",
    "load_snapshot",
    "local_node",
    "market_rows",
    "new_salt",
    "outcome_code",
    "payouts_for",
    "plan_rounds",
    "power_table",
    "predictions_hash",
    "read_results",
    "recover_commit_signer",
    "recover_reveal_signer",
    "replay",
    "require_evm_extra",
    "reveal_digest",
    "reveal_typed_data",
    "score_bp",
    "score_round",
    "sign_commit",
    "sign_reveal",
    "simulate",
    "to_bp",
    "trend",
    "verify_ledger",
    "write_arena_figures",
    "write_artifacts",
]
