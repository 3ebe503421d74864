"""Per-round scores exactly as the contract computes them, in integer basis points (docs/arena.md,
"Scoring and statistics"); the squared errors are ``pastcast.scoring.binary_brier``'s (exact:
integers below 2^53 in float64), only the flooring is the contract's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from pastcast.scoring import binary_brier
from pastcast_arena._records import (
    MAX_BP,
    OUTCOME_EXCLUDED,
    OUTCOME_NO,
    OUTCOME_YES,
    OutcomeCode,
    Round,
    RoundScore,
)

YES_INDEX = 1
"""The outcome slot whose payout share is YES, as Foresight Arena reads the CTF."""


def outcome_code(numerators: Sequence[int], denominator: int, yes_index: int = YES_INDEX) -> int:
    """YES/NO from conditional-token payouts; unresolved (denominator 0) or split payouts are
    excluded from scoring."""
    if denominator == 0:
        return OUTCOME_EXCLUDED
    if not 0 <= yes_index < len(numerators):
        raise ValueError(f"payouts have {len(numerators)} slots; no slot {yes_index}")
    yes = numerators[yes_index]
    if yes == denominator:
        return OUTCOME_YES
    return OUTCOME_NO if yes == 0 else OUTCOME_EXCLUDED


def payouts_for(yes: bool, yes_index: int = YES_INDEX) -> tuple[int, int]:
    """The payout numerators an oracle reports for a resolved binary market."""
    if yes_index not in (0, 1):
        raise ValueError(f"a binary market has slots 0 and 1, not {yes_index}")
    winner = yes_index if yes else 1 - yes_index
    return (1, 0) if winner == 0 else (0, 1)


def _sum_sq(values: Sequence[int], x_bp: NDArray[np.float64]) -> int:
    return int(binary_brier(np.asarray(values, dtype=np.float64), x_bp).sum())


def score_bp(
    predictions: Sequence[int], benchmarks: Sequence[int], outcomes: Sequence[int]
) -> tuple[int, int, int]:
    """(brier_bp, alpha_bp, counted markets); raises when no market counts."""
    k = len(outcomes)
    if len(predictions) != k or len(benchmarks) != k:
        raise ValueError(
            f"{len(predictions)} predictions and {len(benchmarks)} benchmarks for {k} outcomes"
        )
    keep = [i for i, o in enumerate(outcomes) if o != OUTCOME_EXCLUDED]
    if not keep:
        raise ValueError("no resolved market to score")
    x_bp = np.asarray([MAX_BP if outcomes[i] == OUTCOME_YES else 0 for i in keep], np.float64)
    n = len(keep)
    brier = _sum_sq([predictions[i] for i in keep], x_bp) // (n * MAX_BP)
    baseline = _sum_sq([benchmarks[i] for i in keep], x_bp) // (n * MAX_BP)
    return brier, baseline - brier, n


def score_round(
    round_: Round, outcomes: Sequence[OutcomeCode], predictions: Mapping[str, Sequence[int]]
) -> dict[str, RoundScore]:
    """Every revealed agent's score in ``round_`` (which must carry its benchmarks)."""
    bench = round_.benchmark_bp()
    out = {}
    for agent, preds in predictions.items():
        brier, alpha, n = score_bp(preds, bench, outcomes)
        out[agent] = RoundScore(
            round_id=round_.round_id, agent=agent, brier_bp=brier, alpha_bp=alpha, resolved=n
        )
    return out
